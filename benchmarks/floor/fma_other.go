//go:build !amd64

package main

// fmaLoops has no loop off amd64: the floor is the measured GEMM alone.
func fmaLoops() []fmaLoop { return nil }
