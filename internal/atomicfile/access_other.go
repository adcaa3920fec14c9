//go:build !unix

package atomicfile

// canWrite leaves the check to the write itself where access(2) is not
// available.
func canWrite(string) error { return nil }
