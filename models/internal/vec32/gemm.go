// Package vec32 holds the models' float32 kernels that Go cannot make fast
// by itself: a matrix product on register-blocked micro-kernels with packed
// panels of A and B (12×32 in AVX-512, 6×16 in AVX2 and FMA, in assembly;
// ten times gonum's float32 Gemm, which is built on SSE axpy and dot
// products); GELU with its gradient and softmax's exponentials, sixteen or
// eight floats at a time, on a single-precision erf and exp. The kernel
// path is chosen at run time from the CPU (paths.go); off amd64, or
// without AVX2, they run portable Go code.
package vec32

import (
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Gemm sets C = alpha·op(A)·op(B) + beta·C for row-major A (m×k after op),
// B (k×n after op) and C (m×n) with leading strides lda, ldb, ldc, on the
// kernel path kn. With parallel set, the packing of B and
// blocks of C (blocks of rows, by chunks of columns when rows are few) are
// spread over GOMAXPROCS goroutines, with no lock: each goroutine writes
// its own blocks.
//
// The go path runs gonum's Sgemm (SSE on amd64, no FMA). Every vector
// path accumulates each element of C the same way: over blocks of
// sgemmKC along k, in order, each block's products summed from zero in
// order of k and then added to C. So the split across goroutines, the
// micro-kernel's shape and the vector width leave the bits alone.
func (kn *Kernels) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if kn.gemm == nil {
		if m == 0 || n == 0 {
			return
		}
		// gonum splits large products across goroutines itself, by
		// blocks of C (each summed over k in order whatever the split).
		gonum.Implementation{}.Sgemm(transpose(transA), transpose(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemm(kn, parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func transpose(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func gemm(kn *Kernels, parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleBlock(c, ldc, beta, 0, m, 0, n)
		return
	}
	g := &sgemm{kn: kn, transA: transA, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc}
	mr, nr := kn.mr, kn.nr
	g.panels, g.colPanels = (m+mr-1)/mr, (n+nr-1)/nr
	// BLIS's loop order, one block of k after another (in order: that
	// fixes the bits): the block of B is packed in panels of nr columns
	// (bp[q·kb·nr]), shared by the cores; each task packs its block of A
	// (mcRows rows) into micro-panels of mr rows, which stay in L2, and
	// runs the kernel over them for one panel of B after another: each
	// panel of B is read from L1 by every micro-panel of the block (on
	// AVX2; AVX-512's order is the other way round, see task).
	g.bp = packs.get(min(sgemmKC, k) * g.colPanels * nr)
	// Where the kernel streams B past a micro-panel of A kept in L1, an
	// untransposed B is read where it lies (rows contiguous), all but its
	// edge panel.
	g.inPlaceB = !transB && kn.aInL1
	first := 0
	if g.inPlaceB {
		first = n / nr
	}
	// The work is split into tasks of one block of rows by a chunk of
	// column panels. Where rows are few, the blocks shrink (down to
	// minPanels micro-panels) to give every core about four; below that,
	// the columns are split into chunks (each packs its block of A again).
	g.mcPanels = max(1, mcRows/mr)
	procs := runtime.GOMAXPROCS(0)
	if parallel {
		g.mcPanels = max(min(g.mcPanels, g.panels/(4*procs)), min(g.mcPanels, minPanels))
	}
	g.rowBlocks = (g.panels + g.mcPanels - 1) / g.mcPanels
	g.chunk = colChunk(parallel, g.rowBlocks, g.colPanels)
	tasks := g.rowBlocks * ((g.colPanels + g.chunk - 1) / g.chunk)
	for l0 := 0; l0 < k; l0 += sgemmKC {
		kb := min(sgemmKC, k-l0)
		pack := func(lo, hi int) { kn.packB(g.bp, transB, b, ldb, l0, kb, n, nr, first+lo, first+hi) }
		run := func(lo, hi int) {
			ap, tile := packs.get(g.mcPanels*mr*kb), packs.get(mr*nr)
			for t := lo; t < hi; t++ {
				g.task(t, l0, kb, ap, tile)
			}
			packs.put(tile)
			packs.put(ap)
		}
		if parallel {
			ParallelFor(g.colPanels-first, max(1, (1<<14)/(kb*nr)), pack)
			parallelEach(tasks, run)
		} else {
			pack(0, g.colPanels-first)
			run(0, tasks)
		}
	}
	packs.put(g.bp)
}

// sgemm is one product on a vector path, its B packed (bp), split into
// tasks: blocks of mcPanels micro-panels of rows by chunks of column panels.
type sgemm struct {
	kn                         *Kernels
	transA                     bool
	m, n, k                    int
	alpha, beta                float32
	a, b, c, bp                []float32
	lda, ldb, ldc              int
	inPlaceB                   bool
	panels, colPanels          int
	mcPanels, rowBlocks, chunk int
}

// task runs task t: its block of rows by its chunk of columns, for the
// block of k from l0; ap holds its packed A, tile an edge block of C.
func (g *sgemm) task(t, l0, kb int, ap, tile []float32) {
	kn, m, a, lda := g.kn, g.m, g.a, g.lda
	mr := kn.mr
	rb, cc := t%g.rowBlocks, t/g.rowBlocks
	p0, p1 := rb*g.mcPanels, min(g.panels, (rb+1)*g.mcPanels)
	q0, q1 := cc*g.chunk, min(g.colPanels, (cc+1)*g.chunk)
	// A with alpha 1 is read where it lies (alpha·a is a then: the same
	// bits as packed) when its micro-panel's reads stream: an untransposed
	// A's rows are contiguous along k; a transposed A's micro-panel (mr
	// floats a row, rows lda apart) only where it is kept in L1, its
	// strided reads paid once (packing it first would pay them apart from
	// the FMAs).
	inPlaceA := g.alpha == 1 && (!g.transA || kn.aInL1)
	if !inPlaceA {
		kn.packA(ap, g.transA, a, lda, g.alpha, mr*p0, min(m, mr*p1)-mr*p0, l0, kb)
	} else if last := mr * (p1 - 1); m-last < mr {
		// Only an edge micro-panel is packed.
		kn.packA(ap[(p1-1-p0)*mr*kb:], g.transA, a, lda, g.alpha, last, m-last, l0, kb)
	}
	// The tile's loop order: for AVX2's 6×16 a panel of B (16 KiB)
	// is kept in L1 across the block's micro-panels of A; AVX-512's
	// 12×32 panel of B (32 KiB) is not, and keeps a micro-panel of A
	// (12 KiB) in L1 across the chunk's panels of B instead.
	if kn.aInL1 {
		for p := p0; p < p1; p++ {
			for q := q0; q < q1; q++ {
				g.block(ap, tile, p, p0, q, l0, kb, inPlaceA)
			}
		}
		return
	}
	for q := q0; q < q1; q++ {
		for p := p0; p < p1; p++ {
			g.block(ap, tile, p, p0, q, l0, kb, inPlaceA)
		}
	}
}

// block adds the products of block kb of k (from l0) for micro-panel p of
// A (packed in ap from panel p0, or read in place) and panel q of B to C.
func (g *sgemm) block(ap, tile []float32, p, p0, q, l0, kb int, inPlaceA bool) {
	kn, c, ldc := g.kn, g.c, g.ldc
	mr, nr := kn.mr, kn.nr
	j0, i0 := nr*q, mr*p
	cols, rows := min(nr, g.n-j0), min(mr, g.m-i0)
	bq, bs := &g.bp[q*kb*nr], 4*nr
	if g.inPlaceB && cols == nr {
		bq, bs = &g.b[l0*g.ldb+j0], 4*g.ldb
	}
	aq, as, ak := &ap[(p-p0)*mr*kb], 4, 4*mr
	switch {
	case inPlaceA && rows == mr && g.transA:
		aq, as, ak = &g.a[l0*g.lda+i0], 4, 4*g.lda
	case inPlaceA && rows == mr:
		aq, as, ak = &g.a[i0*g.lda+l0], 4*g.lda, 4
	}
	// A whole block with beta 0 is set by the kernel (fresh) without
	// reading C; otherwise beta·C is applied by the task that owns the
	// block, just before its first products are added.
	fresh := l0 == 0 && g.beta == 0 && rows == mr && cols == nr
	if l0 == 0 && !fresh {
		scaleBlock(c, ldc, g.beta, i0, rows, j0, cols)
	}
	if rows == mr && cols == nr {
		kn.gemm(kb, aq, as, ak, bq, bs, &c[i0*ldc+j0], ldc, fresh)
		return
	}
	// An edge block: C's part in a zero-padded tile, so that each element
	// is summed as in a whole block.
	loadTile(tile, nr, c, ldc, i0, rows, j0, cols)
	kn.gemm(kb, aq, as, ak, bq, bs, &tile[0], nr, false)
	storeTile(c, ldc, tile, nr, i0, rows, j0, cols)
}

// loadTile copies C's rows [i0, i0+rows) × columns [j0, j0+cols) into the
// top left of tile (rows nr apart), the rest of tile zeroed: an edge block
// of C for a micro-kernel that writes whole blocks.
func loadTile(tile []float32, nr int, c []float32, ldc, i0, rows, j0, cols int) {
	clear(tile)
	for i := 0; i < rows; i++ {
		copy(tile[i*nr:i*nr+cols], c[(i0+i)*ldc+j0:(i0+i)*ldc+j0+cols])
	}
}

// storeTile copies the edge block loadTile took from C back into it.
func storeTile(c []float32, ldc int, tile []float32, nr, i0, rows, j0, cols int) {
	for i := 0; i < rows; i++ {
		copy(c[(i0+i)*ldc+j0:(i0+i)*ldc+j0+cols], tile[i*nr:i*nr+cols])
	}
}

// colChunk is how many column panels a task of a product takes: all of
// them, unless parallel and the blocks of rows are fewer than four for
// every core; then the columns are split so that there are about that many
// tasks.
func colChunk(parallel bool, rowBlocks, colPanels int) int {
	if procs := runtime.GOMAXPROCS(0); parallel && rowBlocks < 4*procs {
		return max(1, colPanels*rowBlocks/(4*procs))
	}
	return colPanels
}

// mcRows is the rows of A a task packs at a time: a block of 144 rows by
// sgemmKC (144 KiB) stays in the L2 cache while the kernel runs over it.
const mcRows = 144

// minPanels is the fewest micro-panels of A a block of rows is cut to when
// spreading a product over the cores: each panel of B read into L1 serves
// at least that many.
const minPanels = 4

// scaleBlock sets C's rows [i0, i0+rows) × columns [j0, j0+cols) to beta
// times themselves (zero for beta 0, whatever they held).
func scaleBlock(c []float32, ldc int, beta float32, i0, rows, j0, cols int) {
	if beta == 1 {
		return
	}
	for i := i0; i < i0+rows; i++ {
		row := c[i*ldc+j0 : i*ldc+j0+cols]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// sgemmKC is the depth of a packed block: a panel of B, KC×nr (16 KiB in
// AVX2, 32 in AVX-512), stays in the L1 cache while the micro-panels of A
// (KC×mr) pass it. It fixes the bits: each element of C sums its products
// in blocks of KC.
const sgemmKC = 256

// packB copies rows [l0, l0+kb) of op(B) (k×n) into panels of nr columns,
// each kb×nr row-major, zero-padded: panels [qlo, qhi).
func (kn *Kernels) packB(bp []float32, trans bool, b []float32, ldb, l0, kb, n, nr, qlo, qhi int) {
	for q := qlo; q < qhi; q++ {
		j0 := nr * q
		cols := min(nr, n-j0)
		panel := bp[q*kb*nr : (q+1)*kb*nr]
		l := 0
		if trans && cols == nr {
			// 8×8 blocks transposed in registers, where the CPU can.
			l = packBTrans(panel, b[j0*ldb+l0:], ldb, kb, nr)
		}
		if !trans && cols == nr && kb > 0 {
			kn.packBRows(&panel[0], &b[l0*ldb+j0], ldb, kb)
			continue
		}
		for ; l < kb; l++ {
			dst := panel[l*nr : l*nr+nr]
			if trans {
				for j := 0; j < cols; j++ {
					dst[j] = b[(j0+j)*ldb+l0+l]
				}
			} else {
				copy(dst, b[(l0+l)*ldb+j0:(l0+l)*ldb+j0+cols])
			}
			clear(dst[cols:])
		}
	}
}

// packA copies alpha times rows [i0, i0+rows) and columns [l0, l0+kb) of
// op(A) into micro-panels of mr rows, each kb×mr (ap[p·mr·kb + l·mr + i]),
// the last zero-padded to mr rows.
func (kn *Kernels) packA(ap []float32, trans bool, a []float32, lda int, alpha float32, i0, rows, l0, kb int) {
	mr := kn.mr
	full := rows / mr
	if full < (rows+mr-1)/mr {
		clear(ap[full*mr*kb : (full+1)*mr*kb])
	}
	p := 0
	if trans && alpha == 1 && full > 0 && kb > 0 {
		kn.packATrans(&ap[0], &a[l0*lda+i0], lda, kb, full)
		p = full
	}
	for ; p*mr < rows; p++ {
		packAPanel(ap[p*mr*kb:(p+1)*mr*kb], trans, a, lda, alpha, i0+p*mr, min(mr, rows-p*mr), l0, kb, mr)
	}
}

// packAPanel packs one micro-panel of op(A).
func packAPanel(ap []float32, trans bool, a []float32, lda int, alpha float32, i0, rows, l0, kb, mr int) {
	if trans {
		for l := 0; l < kb; l++ {
			src := a[(l0+l)*lda+i0 : (l0+l)*lda+i0+rows]
			dst := ap[l*mr : l*mr+rows]
			for i, v := range src {
				dst[i] = alpha * v
			}
		}
		return
	}
	if rows == mr && mr%6 == 0 {
		// Six rows at a time: six read streams, each packed row's six
		// floats written together.
		for i := 0; i < mr; i += 6 {
			row := func(j int) []float32 { return a[(i0+i+j)*lda+l0 : (i0+i+j)*lda+l0+kb] }
			r0, r1, r2, r3, r4, r5 := row(0), row(1), row(2), row(3), row(4), row(5)
			for l := range r0 {
				d := (*[6]float32)(ap[l*mr+i : l*mr+i+6])
				d[0], d[1], d[2], d[3], d[4], d[5] = alpha*r0[l], alpha*r1[l], alpha*r2[l], alpha*r3[l], alpha*r4[l], alpha*r5[l]
			}
		}
		return
	}
	for i := 0; i < rows; i++ {
		row := a[(i0+i)*lda+l0 : (i0+i)*lda+l0+kb]
		for l, v := range row {
			ap[l*mr+i] = alpha * v
		}
	}
}

// packPool recycles the products' packing buffers (float32 panels, and
// bf16 pairs as uint32).
type packPool[T any] struct{ pool sync.Pool }

func (p *packPool[T]) get(n int) []T {
	if b, ok := p.pool.Get().(*[]T); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]T, n)
}

func (p *packPool[T]) put(b []T) { p.pool.Put(&b) }

var packs packPool[float32]

// ParallelFor calls fn over [0, n) split into contiguous ranges of at
// least grain elements, run by at most GOMAXPROCS goroutines (the caller's
// among them). The ranges are handed out as the goroutines ask for them,
// about four per goroutine, so that a core slowed by other work (another
// run, another process) is not waited for. The split depends on
// GOMAXPROCS: callers' results must not depend on it (each element
// computed on its own, as vec32's kernels do; a product whose bits depend
// on the rows it is computed with, such as OpenBLAS's, splits into blocks
// fixed by its shape and hands those out with grain 1).
func ParallelFor(n, grain int, fn func(lo, hi int)) {
	grain = max(grain, 1)
	workers := min(runtime.GOMAXPROCS(0), n/grain)
	if workers <= 1 {
		fn(0, n)
		return
	}
	runRanges(n, max(grain, (n+4*workers-1)/(4*workers)), workers, fn)
}

// parallelEach calls fn over [0, n) one element at a time, handed out to
// at most GOMAXPROCS goroutines as they ask: for elements of work large
// enough that waiting for the last of four ranges a goroutine would cost
// more than handing them out one by one (the products' tasks).
func parallelEach(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		fn(0, n)
		return
	}
	runRanges(n, 1, workers, fn)
}

// runRanges calls fn over [0, n) in ranges of step, on the caller's
// goroutine and workers-1 others, each taking the next range when done.
func runRanges(n, step, workers int, fn func(lo, hi int)) {
	ranges := (n + step - 1) / step
	var next atomic.Int64
	work := func() {
		for {
			r := int(next.Add(1)) - 1
			if r >= ranges {
				return
			}
			fn(r*step, min(n, (r+1)*step))
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < min(workers, ranges); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
