package vec32

// AddRows adds the rows of src (rows of len(d) floats, stride floats
// apart) into d in order: d[j] += src[r·stride+j] for r = 0, 1, …, rows−1.
// Each column is summed as this scalar order sums it on every path (the
// avx512 path sums sixteen columns a register): a bias's gradient, the
// column sums of the output gradient.
func (kn *Kernels) AddRows(d, src []float32, rows, stride int) {
	if rows == 0 || len(d) == 0 {
		return
	}
	_ = src[(rows-1)*stride+len(d)-1]
	j := kn.addRows(d, src, rows, stride)
	d = d[j:]
	r := 0
	// Four rows a pass: a quarter of the loads and stores of d.
	for ; r+4 <= rows; r += 4 {
		r0 := src[r*stride+j : r*stride+j+len(d)]
		r1 := src[(r+1)*stride+j : (r+1)*stride+j+len(d)]
		r2 := src[(r+2)*stride+j : (r+2)*stride+j+len(d)]
		r3 := src[(r+3)*stride+j : (r+3)*stride+j+len(d)]
		for k := range d {
			d[k] = d[k] + r0[k] + r1[k] + r2[k] + r3[k]
		}
	}
	for ; r < rows; r++ {
		row := src[r*stride+j : r*stride+j+len(d)]
		for k, v := range row {
			d[k] += v
		}
	}
}

// AddRowProducts adds, for the rows of dy and x (rows of len(dg) floats,
// stride floats apart) in order, dy·x into dg and dy into db: dg[j] +=
// dy[r·stride+j]·x[r·stride+j], db[j] += dy[r·stride+j] (LayerNorm's dγ and
// dβ). Each column is summed as this scalar order sums it, the product
// rounded before the sum, on every path.
func (kn *Kernels) AddRowProducts(dg, db, dy, x []float32, rows, stride int) {
	if rows == 0 || len(dg) == 0 {
		return
	}
	db = db[:len(dg)]
	_ = dy[(rows-1)*stride+len(dg)-1]
	_ = x[(rows-1)*stride+len(dg)-1]
	j := kn.addRowProducts(dg, db, dy, x, rows, stride)
	dg, db = dg[j:], db[j:]
	for r := 0; r < rows; r++ {
		dyr := dy[r*stride+j : r*stride+j+len(dg)]
		xr := x[r*stride+j : r*stride+j+len(dg)]
		for k, v := range dyr {
			dg[k] += float32(v * xr[k])
			db[k] += v
		}
	}
}
