package experiments

import (
	"os"
	"syscall"
)

// inodeCtime returns a file's inode number and status-change time (Unix
// ns): what neither tar nor touch can restore.
func inodeCtime(st os.FileInfo) (uint64, int64) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return s.Ino, s.Ctimespec.Sec*1e9 + s.Ctimespec.Nsec
}
