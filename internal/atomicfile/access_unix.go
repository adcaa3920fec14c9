//go:build unix

package atomicfile

import "syscall"

// canWrite checks the permission to write the file at path without opening
// it (opening a FIFO for writing would wait for a reader).
func canWrite(path string) error {
	return syscall.Access(path, 2) // W_OK
}
