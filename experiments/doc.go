// Package experiments expands an experiment spec into runs, identifies each
// run by what it computes, and executes the missing ones into a resumable
// run store that proves its results, locally or as one shard of many.
//
// # Runs and their identity
//
// Expand turns a spec into Runs: per task the IID baseline, per
// configuration × method its searches (each with one trial run per point
// of its grid), the seen run and one run per held-out fold, once per grid
// point and seed. A Run holds package train's
// run spec resolved (grid keys set as the field paths they name, defaults
// from the spec's profile, the task kind named) and the SHA-256 of every
// file it reads (Inputs, Digests). Its ID is
//
//	ID = sha256(canonical{train: spec with each input path replaced by its
//	     digest, search grid, whether it is a search's trial, IDs of the
//	     baseline and searches it needs})[:12]
//
// where the canonical form sorts keys and leaves out every zero-valued
// field, so that a field added to train.RunSpec keeps existing IDs. Paths,
// the names files were given, the spelling of grid keys and the working
// directory are no part of it. A run's Slot is the same hash without the
// inputs' digests: a run whose inputs changed has a new ID in the same
// slot, which is how a stale run is found (StatusOf).
//
// # The store
//
// A Store is a directory of runs, one per ID, whose state is read from the
// disk (DomainBed's sweep layout): a run claims its directory, writes its
// outputs, then timing.json and done — a Manifest of the size and SHA-256 of
// every file. A run whose files are not what done records is Damaged and is
// redone; Verify checks every file. Migrate re-keys a store of an older
// version, whose IDs hashed the spec as written, without retraining.
//
// # Execution
//
// Execute runs the runs not done with a pool of workers, each after the
// runs it needs (Run.Needs: its baseline, its searches, a search its
// trials); Shard slices a sweep for job arrays, a search's trials among
// them. TrainRunner trains a run with package train; a search run trains
// nothing, it picks the best of its trials' scores (train.Best).
//
// Sweep.Execute is the whole of a sweep's execution as beluga run and
// beluga quickstart do it: OpenSweep (a spec file) or SweepOf (a spec made
// in memory) expands the sweep; Execute checks it before any run starts
// (Sweep.Check: the trainer's preflight, the inputs' contents), refuses
// runs whose IDs are provisional, records the sweep in its store and
// executes the runs not done, of one shard when asked.
package experiments
