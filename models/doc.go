// Package models holds the text classifiers beluga trains: tokenizers, a BERT
// encoder that loads HuggingFace checkpoints, a word-vector encoder, the
// classification head, and the gorgonia ops and layers they are built from.
package models
