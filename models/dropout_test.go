package models

import (
	"fmt"
	"github.com/beluga-nlp/beluga/models/backend"
	"math"
	"runtime"
	"testing"
)

// TestKeepMaskIsTheSerialStream checks that the dropout masks drawn on all
// cores are the ones a serial loop over the stream draws, element for
// element, and leave the stream where the serial loop leaves it: a run's
// masks, and so its results, do not depend on the number of cores.
func TestKeepMaskIsTheSerialStream(t *testing.T) {
	for _, tc := range []struct {
		procs, n int
		rate     float64
	}{
		{1, 100003, 0.1},
		{2, 100003, 0.1},
		{7, 1 << 18, 0.3},
		{64, 5, 0.5},
	} {
		t.Run(fmt.Sprintf("procs=%d n=%d", tc.procs, tc.n), func(t *testing.T) {
			serial := newInitStream(42)
			serial.float() // a stream already in use
			want := make([]float32, tc.n)
			for i := range want {
				if serial.float() >= tc.rate {
					want[i] = float32(1 / (1 - tc.rate))
				}
			}
			c := &core{dropout: newInitStream(42), computeCtx: newCompute()}
			c.dropout.float()
			prev := runtime.GOMAXPROCS(tc.procs)
			got := c.keepMask(func(n int) []float32 { return make([]float32, n) }, tc.n, tc.rate)
			runtime.GOMAXPROCS(prev)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("element %d: %g, the serial stream draws %g", i, got[i], want[i])
				}
			}
			if a, b := c.dropout.uint64(), serial.uint64(); a != b {
				t.Errorf("next draw after the mask %#x, after the serial loop %#x", a, b)
			}
		})
	}
}

// TestBiasGradSumsRowsInOrder checks that the bias gradient, summed on all
// cores four rows a pass, has the bits of the serial row-by-row sum.
func TestBiasGradSumsRowsInOrder(t *testing.T) {
	for _, tc := range []struct{ procs, n, out int }{{1, 4099, 300}, {2, 4096, 256}, {7, 1027, 1024}, {64, 3, 5}} {
		s := newInitStream(uint64(tc.n))
		dy, db := make([]float32, tc.n*tc.out), make([]float32, tc.out)
		for i := range dy {
			dy[i] = float32(s.normal())
		}
		for i := range db {
			db[i] = float32(s.normal())
		}
		want := append([]float32(nil), db...)
		for r := 0; r < tc.n; r++ {
			for j := range want {
				want[j] += dy[r*tc.out+j]
			}
		}
		prev := runtime.GOMAXPROCS(tc.procs)
		biasGrad(backend.Reference(), db, dy, tc.n, tc.out)
		runtime.GOMAXPROCS(prev)
		for j := range want {
			if math.Float32bits(db[j]) != math.Float32bits(want[j]) {
				t.Fatalf("procs=%d %d×%d: db[%d] = %g, the serial sum %g", tc.procs, tc.n, tc.out, j, db[j], want[j])
			}
		}
	}
}

// TestSoftmaxBackwardRowsSideBySide checks that softmax's backward pass,
// two rows at a time, has the bits of the row-by-row loop.
func TestSoftmaxBackwardRowsSideBySide(t *testing.T) {
	for _, seq := range []int{1, 2, 5, 128} {
		s := newInitStream(uint64(seq))
		fill := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(s.float())
			}
			return x
		}
		p, dp, keep := fill(seq*seq), fill(seq*seq), fill(3+seq*seq)
		want := append([]float32(nil), dp...)
		for i := 0; i < seq; i++ {
			dr, pr := want[i*seq:(i+1)*seq], p[i*seq:(i+1)*seq]
			for j := range dr {
				dr[j] *= keep[3+i*seq+j]
			}
			var dot float32
			for j := range dr {
				dot += dr[j] * pr[j]
			}
			for j := range dr {
				dr[j] = pr[j] * (dr[j] - dot) * 0.125
			}
		}
		softmaxBackwardRows(backend.Reference(), dp, p, keep, 3, seq, 0.125)
		for i := range want {
			if math.Float32bits(dp[i]) != math.Float32bits(want[i]) {
				t.Fatalf("seq %d: ds[%d] = %g, the row loop gives %g", seq, i, dp[i], want[i])
			}
		}
	}
}
