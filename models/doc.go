// Package models holds the text classifiers beluga trains: transformer
// encoders of the model families HuggingFace's config.json model_type names
// (family.go: the registry, and how to add a family), loaded from
// HuggingFace checkpoints, with each family's classification and span
// heads; a word-vector encoder; and the kernels they are built from.
package models
