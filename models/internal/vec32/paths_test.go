package vec32

import (
	"math"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	all := []*Kernels{{name: PathAVX512}, {name: PathAVX2}, goKernels}
	avx2 := all[1:]
	for _, tc := range []struct {
		env   string
		avail []*Kernels
		want  string
		err   string // a substring of the error; "" for none
	}{
		{"", all, PathAVX512, ""},
		{"", avx2, PathAVX2, ""},
		{"avx2", all, PathAVX2, ""},
		{"go", all, PathGo, ""},
		{"avx512", avx2, PathAVX2, "cannot run the avx512 kernels (it can run: avx2, go)"},
		{"sse", all, PathAVX512, `unknown kernel path`},
		{"AVX2", all, PathAVX512, `unknown kernel path`},
	} {
		k, err := choose(tc.env, tc.avail)
		if k.name != tc.want {
			t.Errorf("%s=%q: path %s, want %s", EnvKernels, tc.env, k.name, tc.want)
		}
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s=%q: %v", EnvKernels, tc.env, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s=%q: error %v, want one containing %q", EnvKernels, tc.env, err, tc.err)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, p := range Paths() {
		kn, err := Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		if kn.Name() != p {
			t.Errorf("Lookup(%s): path %s", p, kn.Name())
		}
	}
	for _, p := range []string{"", "neon", "avx1024"} {
		if _, err := Lookup(p); err == nil {
			t.Errorf("Lookup(%q) succeeded", p)
		}
	}
	if Paths()[len(Paths())-1] != PathGo {
		t.Errorf("Paths() = %v: the go path must always be there", Paths())
	}
}

// TestVectorPathsAgree: the vector paths give the same bits (the
// reproducibility promise of docs/performance.md): the products, GELU and
// its gradient and softmax's exponentials, on lengths and shapes that take
// every edge case of the wider kernels.
func TestVectorPathsAgree(t *testing.T) {
	var vector []string
	for _, p := range Paths() {
		if p != PathGo {
			vector = append(vector, p)
		}
	}
	if len(vector) < 2 {
		t.Skipf("this machine has %d vector path(s): %v", len(vector), vector)
	}
	seed := uint64(5)
	rnd := func() float32 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return float32(float64(seed>>11)/(1<<53)*8 - 4)
	}
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = rnd()
		}
		return x
	}
	type out struct{ c, y, dx, e []float32 }
	run := func(p string, alpha float32, a, b, c0, x, dy []float32, m, n, k int) out {
		kn, err := Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		c := append([]float32(nil), c0...)
		kn.Gemm(true, false, true, m, n, k, alpha, a, k, b, k, 1, c, n)
		// op(A) = Aᵀ: the kernels' other way of reading A.
		kn.Gemm(true, true, false, m, n, k, alpha, a, m, b, n, 1, c, n)
		y, dx := make([]float32, len(x)), make([]float32, len(x))
		kn.GELU(y, x)
		kn.GELUBackward(dx, dy, x)
		e := append([]float32(nil), x...)
		s := kn.ExpShiftSum(e, 4)
		return out{c, y, dx, append(e, s)}
	}
	for _, sh := range [][3]int{{12, 32, 256}, {13, 33, 300}, {37, 70, 513}, {4, 16, 7}} {
		m, n, k := sh[0], sh[1], sh[2]
		a, b, c0 := fill(m*k), fill(n*k), fill(m*n)
		for i, length := range []int{7, 8, 15, 16, 24, 40, 1001} {
			alpha := []float32{1, 0.7}[i%2] // 1: A read in place, without packing
			x, dy := fill(length), fill(length)
			ref := run(vector[0], alpha, a, b, c0, x, dy, m, n, k)
			for _, p := range vector[1:] {
				got := run(p, alpha, a, b, c0, x, dy, m, n, k)
				for name, pair := range map[string][2][]float32{"gemm": {ref.c, got.c}, "gelu": {ref.y, got.y}, "gelu'": {ref.dx, got.dx}, "exp": {ref.e, got.e}} {
					for i := range pair[0] {
						if math.Float32bits(pair[0][i]) != math.Float32bits(pair[1][i]) {
							t.Fatalf("%dx%dx%d, length %d: %s[%d] is %g on %s, %g on %s", m, n, k, length, name, i, pair[0][i], vector[0], pair[1][i], p)
						}
					}
				}
			}
		}
	}
}

// TestAdamW: every path gives the bits of the scalar update (each product
// and sum rounded apart), on lengths that take every edge of the kernels.
func TestAdamW(t *testing.T) {
	c := AdamWCoef{B1: 0.9, OneMinusB1: 1 - float32(0.9), B2: 0.999, OneMinusB2: 1 - float32(0.999),
		InvBC2: 1 / float32(math.Sqrt(1-math.Pow(0.999, 3))), Eps: 1e-8, Decay: 1 - 1e-4*0.01, StepSize: 1e-4 / float32(1-math.Pow(0.9, 3))}
	forEachPath(t, func(t *testing.T, kn *Kernels) {
		for _, n := range []int{1, 7, 8, 15, 16, 24, 33, 1000} {
			seed := uint64(n)
			rnd := func() float32 {
				seed = seed*6364136223846793005 + 1442695040888963407
				return float32(float64(seed>>11)/(1<<53)*2 - 1)
			}
			value, grad, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range value {
				value[i], grad[i], m[i], v[i] = rnd(), rnd(), rnd()*0.1, rnd()*rnd()*0.01
			}
			wv, wm, wvv := append([]float32(nil), value...), append([]float32(nil), m...), append([]float32(nil), v...)
			for i, g := range grad {
				wm[i] = float32(c.B1*wm[i]) + float32(c.OneMinusB1*g)
				wvv[i] = float32(c.B2*wvv[i]) + float32(float32(c.OneMinusB2*g)*g)
				denom := float32(float32(math.Sqrt(float64(wvv[i])))*c.InvBC2) + c.Eps
				wv[i] = float32(wv[i]*c.Decay) - float32(c.StepSize*wm[i])/denom
			}
			kn.AdamW(value, grad, m, v, c)
			for i := range value {
				if math.Float32bits(value[i]) != math.Float32bits(wv[i]) || m[i] != wm[i] || v[i] != wvv[i] {
					t.Fatalf("n=%d, element %d: θ, m, v = %g, %g, %g, want %g, %g, %g", n, i, value[i], m[i], v[i], wv[i], wm[i], wvv[i])
				}
			}
		}
	})
}
