// Package models holds the text classifiers beluga trains: transformer
// encoders of the model families HuggingFace's config.json model_type names
// (family.go: the registry, and how to add a family), loaded from
// HuggingFace checkpoints, with each family's classification and span
// heads; decoder families (GPT-2, Llama, Qwen2: decoder.go) with their
// classifiers and language models, which score a prompt's label
// verbalizers after a cached prefix (lm.go); a word-vector encoder; and
// the kernels they are built from.
package models
