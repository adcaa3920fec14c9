// Package experiments expands an experiment spec into runs, identifies each run
// by a hash of its resolved spec, and executes the missing ones into a
// resumable run store, locally or as one shard of many.
package experiments
