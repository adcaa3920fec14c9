#include "textflag.h"

// Constants of the vectorised GELU, each repeated 8 times (one YMM): the
// erf and exp coefficients of erf.go, as float32 bit patterns.
// invsqrt2 = 0.7071067811865476
DATA gelu<>+0(SB)/4, $0x3f3504f3
DATA gelu<>+4(SB)/4, $0x3f3504f3
DATA gelu<>+8(SB)/4, $0x3f3504f3
DATA gelu<>+12(SB)/4, $0x3f3504f3
DATA gelu<>+16(SB)/4, $0x3f3504f3
DATA gelu<>+20(SB)/4, $0x3f3504f3
DATA gelu<>+24(SB)/4, $0x3f3504f3
DATA gelu<>+28(SB)/4, $0x3f3504f3
// m4 = -4.0
DATA gelu<>+32(SB)/4, $0xc0800000
DATA gelu<>+36(SB)/4, $0xc0800000
DATA gelu<>+40(SB)/4, $0xc0800000
DATA gelu<>+44(SB)/4, $0xc0800000
DATA gelu<>+48(SB)/4, $0xc0800000
DATA gelu<>+52(SB)/4, $0xc0800000
DATA gelu<>+56(SB)/4, $0xc0800000
DATA gelu<>+60(SB)/4, $0xc0800000
// p4 = 4.0
DATA gelu<>+64(SB)/4, $0x40800000
DATA gelu<>+68(SB)/4, $0x40800000
DATA gelu<>+72(SB)/4, $0x40800000
DATA gelu<>+76(SB)/4, $0x40800000
DATA gelu<>+80(SB)/4, $0x40800000
DATA gelu<>+84(SB)/4, $0x40800000
DATA gelu<>+88(SB)/4, $0x40800000
DATA gelu<>+92(SB)/4, $0x40800000
// a13 = -2.72614225801306e-10
DATA gelu<>+96(SB)/4, $0xaf95df0b
DATA gelu<>+100(SB)/4, $0xaf95df0b
DATA gelu<>+104(SB)/4, $0xaf95df0b
DATA gelu<>+108(SB)/4, $0xaf95df0b
DATA gelu<>+112(SB)/4, $0xaf95df0b
DATA gelu<>+116(SB)/4, $0xaf95df0b
DATA gelu<>+120(SB)/4, $0xaf95df0b
DATA gelu<>+124(SB)/4, $0xaf95df0b
// a11 = 2.77068142495902e-08
DATA gelu<>+128(SB)/4, $0x32edffee
DATA gelu<>+132(SB)/4, $0x32edffee
DATA gelu<>+136(SB)/4, $0x32edffee
DATA gelu<>+140(SB)/4, $0x32edffee
DATA gelu<>+144(SB)/4, $0x32edffee
DATA gelu<>+148(SB)/4, $0x32edffee
DATA gelu<>+152(SB)/4, $0x32edffee
DATA gelu<>+156(SB)/4, $0x32edffee
// a9 = -2.10102402082508e-06
DATA gelu<>+160(SB)/4, $0xb60cff51
DATA gelu<>+164(SB)/4, $0xb60cff51
DATA gelu<>+168(SB)/4, $0xb60cff51
DATA gelu<>+172(SB)/4, $0xb60cff51
DATA gelu<>+176(SB)/4, $0xb60cff51
DATA gelu<>+180(SB)/4, $0xb60cff51
DATA gelu<>+184(SB)/4, $0xb60cff51
DATA gelu<>+188(SB)/4, $0xb60cff51
// a7 = -5.69250639462346e-05
DATA gelu<>+192(SB)/4, $0xb86ec2d2
DATA gelu<>+196(SB)/4, $0xb86ec2d2
DATA gelu<>+200(SB)/4, $0xb86ec2d2
DATA gelu<>+204(SB)/4, $0xb86ec2d2
DATA gelu<>+208(SB)/4, $0xb86ec2d2
DATA gelu<>+212(SB)/4, $0xb86ec2d2
DATA gelu<>+216(SB)/4, $0xb86ec2d2
DATA gelu<>+220(SB)/4, $0xb86ec2d2
// a5 = -0.000734990630326855
DATA gelu<>+224(SB)/4, $0xba40ac63
DATA gelu<>+228(SB)/4, $0xba40ac63
DATA gelu<>+232(SB)/4, $0xba40ac63
DATA gelu<>+236(SB)/4, $0xba40ac63
DATA gelu<>+240(SB)/4, $0xba40ac63
DATA gelu<>+244(SB)/4, $0xba40ac63
DATA gelu<>+248(SB)/4, $0xba40ac63
DATA gelu<>+252(SB)/4, $0xba40ac63
// a3 = -0.00295459980854025
DATA gelu<>+256(SB)/4, $0xbb41a1f6
DATA gelu<>+260(SB)/4, $0xbb41a1f6
DATA gelu<>+264(SB)/4, $0xbb41a1f6
DATA gelu<>+268(SB)/4, $0xbb41a1f6
DATA gelu<>+272(SB)/4, $0xbb41a1f6
DATA gelu<>+276(SB)/4, $0xbb41a1f6
DATA gelu<>+280(SB)/4, $0xbb41a1f6
DATA gelu<>+284(SB)/4, $0xbb41a1f6
// a1 = -0.0160960333262415
DATA gelu<>+288(SB)/4, $0xbc83dbd4
DATA gelu<>+292(SB)/4, $0xbc83dbd4
DATA gelu<>+296(SB)/4, $0xbc83dbd4
DATA gelu<>+300(SB)/4, $0xbc83dbd4
DATA gelu<>+304(SB)/4, $0xbc83dbd4
DATA gelu<>+308(SB)/4, $0xbc83dbd4
DATA gelu<>+312(SB)/4, $0xbc83dbd4
DATA gelu<>+316(SB)/4, $0xbc83dbd4
// b8 = -1.45660718464996e-05
DATA gelu<>+320(SB)/4, $0xb77460cd
DATA gelu<>+324(SB)/4, $0xb77460cd
DATA gelu<>+328(SB)/4, $0xb77460cd
DATA gelu<>+332(SB)/4, $0xb77460cd
DATA gelu<>+336(SB)/4, $0xb77460cd
DATA gelu<>+340(SB)/4, $0xb77460cd
DATA gelu<>+344(SB)/4, $0xb77460cd
DATA gelu<>+348(SB)/4, $0xb77460cd
// b6 = -0.000213374055278905
DATA gelu<>+352(SB)/4, $0xb95fbd29
DATA gelu<>+356(SB)/4, $0xb95fbd29
DATA gelu<>+360(SB)/4, $0xb95fbd29
DATA gelu<>+364(SB)/4, $0xb95fbd29
DATA gelu<>+368(SB)/4, $0xb95fbd29
DATA gelu<>+372(SB)/4, $0xb95fbd29
DATA gelu<>+376(SB)/4, $0xb95fbd29
DATA gelu<>+380(SB)/4, $0xb95fbd29
// b4 = -0.00168282697438203
DATA gelu<>+384(SB)/4, $0xbadc924e
DATA gelu<>+388(SB)/4, $0xbadc924e
DATA gelu<>+392(SB)/4, $0xbadc924e
DATA gelu<>+396(SB)/4, $0xbadc924e
DATA gelu<>+400(SB)/4, $0xbadc924e
DATA gelu<>+404(SB)/4, $0xbadc924e
DATA gelu<>+408(SB)/4, $0xbadc924e
DATA gelu<>+412(SB)/4, $0xbadc924e
// b2 = -0.00737332916720468
DATA gelu<>+416(SB)/4, $0xbbf19bf8
DATA gelu<>+420(SB)/4, $0xbbf19bf8
DATA gelu<>+424(SB)/4, $0xbbf19bf8
DATA gelu<>+428(SB)/4, $0xbbf19bf8
DATA gelu<>+432(SB)/4, $0xbbf19bf8
DATA gelu<>+436(SB)/4, $0xbbf19bf8
DATA gelu<>+440(SB)/4, $0xbbf19bf8
DATA gelu<>+444(SB)/4, $0xbbf19bf8
// b0 = -0.0142647390514189
DATA gelu<>+448(SB)/4, $0xbc69b6a7
DATA gelu<>+452(SB)/4, $0xbc69b6a7
DATA gelu<>+456(SB)/4, $0xbc69b6a7
DATA gelu<>+460(SB)/4, $0xbc69b6a7
DATA gelu<>+464(SB)/4, $0xbc69b6a7
DATA gelu<>+468(SB)/4, $0xbc69b6a7
DATA gelu<>+472(SB)/4, $0xbc69b6a7
DATA gelu<>+476(SB)/4, $0xbc69b6a7
// half = 0.5
DATA gelu<>+480(SB)/4, $0x3f000000
DATA gelu<>+484(SB)/4, $0x3f000000
DATA gelu<>+488(SB)/4, $0x3f000000
DATA gelu<>+492(SB)/4, $0x3f000000
DATA gelu<>+496(SB)/4, $0x3f000000
DATA gelu<>+500(SB)/4, $0x3f000000
DATA gelu<>+504(SB)/4, $0x3f000000
DATA gelu<>+508(SB)/4, $0x3f000000
// log2e = 1.4426950408889634
DATA gelu<>+512(SB)/4, $0x3fb8aa3b
DATA gelu<>+516(SB)/4, $0x3fb8aa3b
DATA gelu<>+520(SB)/4, $0x3fb8aa3b
DATA gelu<>+524(SB)/4, $0x3fb8aa3b
DATA gelu<>+528(SB)/4, $0x3fb8aa3b
DATA gelu<>+532(SB)/4, $0x3fb8aa3b
DATA gelu<>+536(SB)/4, $0x3fb8aa3b
DATA gelu<>+540(SB)/4, $0x3fb8aa3b
// c1 = 0.693359375
DATA gelu<>+544(SB)/4, $0x3f318000
DATA gelu<>+548(SB)/4, $0x3f318000
DATA gelu<>+552(SB)/4, $0x3f318000
DATA gelu<>+556(SB)/4, $0x3f318000
DATA gelu<>+560(SB)/4, $0x3f318000
DATA gelu<>+564(SB)/4, $0x3f318000
DATA gelu<>+568(SB)/4, $0x3f318000
DATA gelu<>+572(SB)/4, $0x3f318000
// c2 = -0.00021219444
DATA gelu<>+576(SB)/4, $0xb95e8083
DATA gelu<>+580(SB)/4, $0xb95e8083
DATA gelu<>+584(SB)/4, $0xb95e8083
DATA gelu<>+588(SB)/4, $0xb95e8083
DATA gelu<>+592(SB)/4, $0xb95e8083
DATA gelu<>+596(SB)/4, $0xb95e8083
DATA gelu<>+600(SB)/4, $0xb95e8083
DATA gelu<>+604(SB)/4, $0xb95e8083
// e5 = 0.000198756915
DATA gelu<>+608(SB)/4, $0x39506967
DATA gelu<>+612(SB)/4, $0x39506967
DATA gelu<>+616(SB)/4, $0x39506967
DATA gelu<>+620(SB)/4, $0x39506967
DATA gelu<>+624(SB)/4, $0x39506967
DATA gelu<>+628(SB)/4, $0x39506967
DATA gelu<>+632(SB)/4, $0x39506967
DATA gelu<>+636(SB)/4, $0x39506967
// e4 = 0.0013981999507
DATA gelu<>+640(SB)/4, $0x3ab743ce
DATA gelu<>+644(SB)/4, $0x3ab743ce
DATA gelu<>+648(SB)/4, $0x3ab743ce
DATA gelu<>+652(SB)/4, $0x3ab743ce
DATA gelu<>+656(SB)/4, $0x3ab743ce
DATA gelu<>+660(SB)/4, $0x3ab743ce
DATA gelu<>+664(SB)/4, $0x3ab743ce
DATA gelu<>+668(SB)/4, $0x3ab743ce
// e3 = 0.0083334519073
DATA gelu<>+672(SB)/4, $0x3c088908
DATA gelu<>+676(SB)/4, $0x3c088908
DATA gelu<>+680(SB)/4, $0x3c088908
DATA gelu<>+684(SB)/4, $0x3c088908
DATA gelu<>+688(SB)/4, $0x3c088908
DATA gelu<>+692(SB)/4, $0x3c088908
DATA gelu<>+696(SB)/4, $0x3c088908
DATA gelu<>+700(SB)/4, $0x3c088908
// e2 = 0.041665795894
DATA gelu<>+704(SB)/4, $0x3d2aa9c1
DATA gelu<>+708(SB)/4, $0x3d2aa9c1
DATA gelu<>+712(SB)/4, $0x3d2aa9c1
DATA gelu<>+716(SB)/4, $0x3d2aa9c1
DATA gelu<>+720(SB)/4, $0x3d2aa9c1
DATA gelu<>+724(SB)/4, $0x3d2aa9c1
DATA gelu<>+728(SB)/4, $0x3d2aa9c1
DATA gelu<>+732(SB)/4, $0x3d2aa9c1
// e1 = 0.16666665459
DATA gelu<>+736(SB)/4, $0x3e2aaaaa
DATA gelu<>+740(SB)/4, $0x3e2aaaaa
DATA gelu<>+744(SB)/4, $0x3e2aaaaa
DATA gelu<>+748(SB)/4, $0x3e2aaaaa
DATA gelu<>+752(SB)/4, $0x3e2aaaaa
DATA gelu<>+756(SB)/4, $0x3e2aaaaa
DATA gelu<>+760(SB)/4, $0x3e2aaaaa
DATA gelu<>+764(SB)/4, $0x3e2aaaaa
// e0 = 0.50000001201
DATA gelu<>+768(SB)/4, $0x3f000000
DATA gelu<>+772(SB)/4, $0x3f000000
DATA gelu<>+776(SB)/4, $0x3f000000
DATA gelu<>+780(SB)/4, $0x3f000000
DATA gelu<>+784(SB)/4, $0x3f000000
DATA gelu<>+788(SB)/4, $0x3f000000
DATA gelu<>+792(SB)/4, $0x3f000000
DATA gelu<>+796(SB)/4, $0x3f000000
// one = 1.0
DATA gelu<>+800(SB)/4, $0x3f800000
DATA gelu<>+804(SB)/4, $0x3f800000
DATA gelu<>+808(SB)/4, $0x3f800000
DATA gelu<>+812(SB)/4, $0x3f800000
DATA gelu<>+816(SB)/4, $0x3f800000
DATA gelu<>+820(SB)/4, $0x3f800000
DATA gelu<>+824(SB)/4, $0x3f800000
DATA gelu<>+828(SB)/4, $0x3f800000
// expmin = -87.33654
DATA gelu<>+832(SB)/4, $0xc2aeac4f
DATA gelu<>+836(SB)/4, $0xc2aeac4f
DATA gelu<>+840(SB)/4, $0xc2aeac4f
DATA gelu<>+844(SB)/4, $0xc2aeac4f
DATA gelu<>+848(SB)/4, $0xc2aeac4f
DATA gelu<>+852(SB)/4, $0xc2aeac4f
DATA gelu<>+856(SB)/4, $0xc2aeac4f
DATA gelu<>+860(SB)/4, $0xc2aeac4f
// invsqrt2pi = 0.3989422804014327
DATA gelu<>+864(SB)/4, $0x3ecc422a
DATA gelu<>+868(SB)/4, $0x3ecc422a
DATA gelu<>+872(SB)/4, $0x3ecc422a
DATA gelu<>+876(SB)/4, $0x3ecc422a
DATA gelu<>+880(SB)/4, $0x3ecc422a
DATA gelu<>+884(SB)/4, $0x3ecc422a
DATA gelu<>+888(SB)/4, $0x3ecc422a
DATA gelu<>+892(SB)/4, $0x3ecc422a
// mhalf = -0.5
DATA gelu<>+896(SB)/4, $0xbf000000
DATA gelu<>+900(SB)/4, $0xbf000000
DATA gelu<>+904(SB)/4, $0xbf000000
DATA gelu<>+908(SB)/4, $0xbf000000
DATA gelu<>+912(SB)/4, $0xbf000000
DATA gelu<>+916(SB)/4, $0xbf000000
DATA gelu<>+920(SB)/4, $0xbf000000
DATA gelu<>+924(SB)/4, $0xbf000000
GLOBL gelu<>(SB), RODATA|NOPTR, $928

// func geluForwardAVX(y, x *float32, n int)
//
// y = ½x(1 + erf(x/√2)) for n (a multiple of 8) floats.
TEXT ·geluForwardAVX(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   fdone
floop:
	VMOVUPS     (SI), Y0
	VMULPS      gelu<>+0(SB), Y0, Y1
	VMAXPS      gelu<>+32(SB), Y1, Y1
	VMINPS      gelu<>+64(SB), Y1, Y1
	VMULPS      Y1, Y1, Y2
	VMOVUPS     gelu<>+96(SB), Y3
	VFMADD213PS gelu<>+128(SB), Y2, Y3
	VFMADD213PS gelu<>+160(SB), Y2, Y3
	VFMADD213PS gelu<>+192(SB), Y2, Y3
	VFMADD213PS gelu<>+224(SB), Y2, Y3
	VFMADD213PS gelu<>+256(SB), Y2, Y3
	VFMADD213PS gelu<>+288(SB), Y2, Y3
	VMULPS      Y1, Y3, Y3
	VMOVUPS     gelu<>+320(SB), Y4
	VFMADD213PS gelu<>+352(SB), Y2, Y4
	VFMADD213PS gelu<>+384(SB), Y2, Y4
	VFMADD213PS gelu<>+416(SB), Y2, Y4
	VFMADD213PS gelu<>+448(SB), Y2, Y4
	VDIVPS      Y4, Y3, Y3
	VMULPS      gelu<>+480(SB), Y0, Y5
	VFMADD213PS Y5, Y5, Y3
	VMOVUPS     Y3, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        CX
	JNZ         floop
fdone:
	VZEROUPPER
	RET

// func geluBackwardAVX(dx, dy, x *float32, n int)
//
// dx = dy·(Φ(x) + x·φ(x)) for n (a multiple of 8) floats, with
// Φ(x) = ½(1 + erf(x/√2)) and φ(x) = e^(−x²/2)/√(2π), e^t as Cephes' expf.
TEXT ·geluBackwardAVX(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   bdone
bloop:
	VMOVUPS     (SI), Y0
	VMULPS      gelu<>+0(SB), Y0, Y1
	VMAXPS      gelu<>+32(SB), Y1, Y1
	VMINPS      gelu<>+64(SB), Y1, Y1
	VMULPS      Y1, Y1, Y2
	VMOVUPS     gelu<>+96(SB), Y3
	VFMADD213PS gelu<>+128(SB), Y2, Y3
	VFMADD213PS gelu<>+160(SB), Y2, Y3
	VFMADD213PS gelu<>+192(SB), Y2, Y3
	VFMADD213PS gelu<>+224(SB), Y2, Y3
	VFMADD213PS gelu<>+256(SB), Y2, Y3
	VFMADD213PS gelu<>+288(SB), Y2, Y3
	VMULPS      Y1, Y3, Y3
	VMOVUPS     gelu<>+320(SB), Y4
	VFMADD213PS gelu<>+352(SB), Y2, Y4
	VFMADD213PS gelu<>+384(SB), Y2, Y4
	VFMADD213PS gelu<>+416(SB), Y2, Y4
	VFMADD213PS gelu<>+448(SB), Y2, Y4
	VDIVPS      Y4, Y3, Y3
	// Y3 = Φ(x) = ½ + ½·erf
	VMOVUPS     gelu<>+480(SB), Y5
	VFMADD213PS Y5, Y5, Y3
	// Y6 = t = max(−x²/2, expmin)
	VMULPS      Y0, Y0, Y6
	VMULPS      gelu<>+896(SB), Y6, Y6
	VMAXPS      gelu<>+832(SB), Y6, Y6
	// n = round(t·log2e), r = t − n·c1 − n·c2
	VMULPS      gelu<>+512(SB), Y6, Y7
	VROUNDPS    $0, Y7, Y7
	VMOVAPS     Y6, Y8
	VFNMADD231PS gelu<>+544(SB), Y7, Y8
	VFNMADD231PS gelu<>+576(SB), Y7, Y8
	// p = ((((e5·r + e4)·r + e3)·r + e2)·r + e1)·r + e0; e^r = p·r² + r + 1
	VMOVUPS     gelu<>+608(SB), Y9
	VFMADD213PS gelu<>+640(SB), Y8, Y9
	VFMADD213PS gelu<>+672(SB), Y8, Y9
	VFMADD213PS gelu<>+704(SB), Y8, Y9
	VFMADD213PS gelu<>+736(SB), Y8, Y9
	VFMADD213PS gelu<>+768(SB), Y8, Y9
	VMULPS      Y8, Y8, Y10
	VADDPS      gelu<>+800(SB), Y8, Y11
	VFMADD213PS Y11, Y10, Y9
	// × 2ⁿ: add n to the exponent bits
	VCVTPS2DQ   Y7, Y7
	VPSLLD      $23, Y7, Y7
	VPADDD      Y7, Y9, Y9
	// Y9 = x·φ(x); dx = dy·(Φ + x·φ)
	VMULPS      gelu<>+864(SB), Y9, Y9
	VMULPS      Y0, Y9, Y9
	VADDPS      Y9, Y3, Y3
	VMULPS      (DX), Y3, Y3
	VMOVUPS     Y3, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DX
	ADDQ        $32, DI
	DECQ        CX
	JNZ         bloop
bdone:
	VZEROUPPER
	RET

// func expShiftAVX(x *float32, n int, shift float32, sums *[8]float32)
//
// x[i] = e^(x[i]−shift) for n (a multiple of 8) floats with x[i] ≤ shift
// (exactly 0 below e^−87.34, as Exp), and sums[j] += Σ of lane j.
TEXT ·expShiftAVX(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS shift+16(FP), Y12
	MOVQ         sums+24(FP), DI
	VMOVUPS      (DI), Y13
	SHRQ         $3, CX
	JZ           edone

eloop:
	VMOVUPS      (SI), Y6
	VSUBPS       Y12, Y6, Y6
	VCMPPS       $0x1d, gelu<>+832(SB), Y6, Y14
	VMAXPS       gelu<>+832(SB), Y6, Y6
	VMULPS       gelu<>+512(SB), Y6, Y7
	VROUNDPS     $0, Y7, Y7
	VMOVAPS      Y6, Y8
	VFNMADD231PS gelu<>+544(SB), Y7, Y8
	VFNMADD231PS gelu<>+576(SB), Y7, Y8
	VMOVUPS      gelu<>+608(SB), Y9
	VFMADD213PS  gelu<>+640(SB), Y8, Y9
	VFMADD213PS  gelu<>+672(SB), Y8, Y9
	VFMADD213PS  gelu<>+704(SB), Y8, Y9
	VFMADD213PS  gelu<>+736(SB), Y8, Y9
	VFMADD213PS  gelu<>+768(SB), Y8, Y9
	VMULPS       Y8, Y8, Y10
	VADDPS       gelu<>+800(SB), Y8, Y11
	VFMADD213PS  Y11, Y10, Y9
	VCVTPS2DQ    Y7, Y7
	VPSLLD       $23, Y7, Y7
	VPADDD       Y7, Y9, Y9
	VANDPS       Y14, Y9, Y9
	VMOVUPS      Y9, (SI)
	VADDPS       Y9, Y13, Y13
	ADDQ         $32, SI
	DECQ         CX
	JNZ          eloop

edone:
	VMOVUPS    Y13, (DI)
	VZEROUPPER
	RET

// func geluForwardAVX512(y, x *float32, n int)
//
// y = ½x(1 + erf(x/√2)) for n (a multiple of 16) floats.
TEXT ·geluForwardAVX512(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   fdone512
floop512:
	VMOVUPS     (SI), Z0
	VMULPS.BCST      gelu<>+0(SB), Z0, Z1
	VMAXPS.BCST      gelu<>+32(SB), Z1, Z1
	VMINPS.BCST      gelu<>+64(SB), Z1, Z1
	VMULPS      Z1, Z1, Z2
	VBROADCASTSS     gelu<>+96(SB), Z3
	VFMADD213PS.BCST gelu<>+128(SB), Z2, Z3
	VFMADD213PS.BCST gelu<>+160(SB), Z2, Z3
	VFMADD213PS.BCST gelu<>+192(SB), Z2, Z3
	VFMADD213PS.BCST gelu<>+224(SB), Z2, Z3
	VFMADD213PS.BCST gelu<>+256(SB), Z2, Z3
	VFMADD213PS.BCST gelu<>+288(SB), Z2, Z3
	VMULPS      Z1, Z3, Z3
	VBROADCASTSS     gelu<>+320(SB), Z4
	VFMADD213PS.BCST gelu<>+352(SB), Z2, Z4
	VFMADD213PS.BCST gelu<>+384(SB), Z2, Z4
	VFMADD213PS.BCST gelu<>+416(SB), Z2, Z4
	VFMADD213PS.BCST gelu<>+448(SB), Z2, Z4
	VDIVPS      Z4, Z3, Z3
	VMULPS.BCST      gelu<>+480(SB), Z0, Z5
	VFMADD213PS Z5, Z5, Z3
	VMOVUPS     Z3, (DI)
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNZ         floop512
fdone512:
	VZEROUPPER
	RET


// func geluBackwardAVX512(dx, dy, x *float32, n int)
//
// dx = dy·(Φ(x) + x·φ(x)) for n (a multiple of 16) floats, with
// Φ(x) = ½(1 + erf(x/√2)) and φ(x) = e^(−x²/2)/√(2π), e^t as Cephes' expf.
TEXT ·geluBackwardAVX512(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   bdone512
bloop512:
	VMOVUPS     (SI), Z0
	VMULPS.BCST      gelu<>+0(SB), Z0, Z1
	VMAXPS.BCST      gelu<>+32(SB), Z1, Z1
	VMINPS.BCST      gelu<>+64(SB), Z1, Z1
	VMULPS      Z1, Z1, Z2
	VBROADCASTSS     gelu<>+96(SB), Z3
	VFMADD213PS.BCST gelu<>+128(SB), Z2, Z3
	VFMADD213PS.BCST gelu<>+160(SB), Z2, Z3
	VFMADD213PS.BCST gelu<>+192(SB), Z2, Z3
	VFMADD213PS.BCST gelu<>+224(SB), Z2, Z3
	VFMADD213PS.BCST gelu<>+256(SB), Z2, Z3
	VFMADD213PS.BCST gelu<>+288(SB), Z2, Z3
	VMULPS      Z1, Z3, Z3
	VBROADCASTSS     gelu<>+320(SB), Z4
	VFMADD213PS.BCST gelu<>+352(SB), Z2, Z4
	VFMADD213PS.BCST gelu<>+384(SB), Z2, Z4
	VFMADD213PS.BCST gelu<>+416(SB), Z2, Z4
	VFMADD213PS.BCST gelu<>+448(SB), Z2, Z4
	VDIVPS      Z4, Z3, Z3
	// Z3 = Φ(x) = ½ + ½·erf
	VBROADCASTSS     gelu<>+480(SB), Z5
	VFMADD213PS Z5, Z5, Z3
	// Z6 = t = max(−x²/2, expmin)
	VMULPS      Z0, Z0, Z6
	VMULPS.BCST      gelu<>+896(SB), Z6, Z6
	VMAXPS.BCST      gelu<>+832(SB), Z6, Z6
	// n = round(t·log2e), r = t − n·c1 − n·c2
	VMULPS.BCST      gelu<>+512(SB), Z6, Z7
	VRNDSCALEPS $0, Z7, Z7
	VMOVAPS     Z6, Z8
	VFNMADD231PS.BCST gelu<>+544(SB), Z7, Z8
	VFNMADD231PS.BCST gelu<>+576(SB), Z7, Z8
	// p = ((((e5·r + e4)·r + e3)·r + e2)·r + e1)·r + e0; e^r = p·r² + r + 1
	VBROADCASTSS     gelu<>+608(SB), Z9
	VFMADD213PS.BCST gelu<>+640(SB), Z8, Z9
	VFMADD213PS.BCST gelu<>+672(SB), Z8, Z9
	VFMADD213PS.BCST gelu<>+704(SB), Z8, Z9
	VFMADD213PS.BCST gelu<>+736(SB), Z8, Z9
	VFMADD213PS.BCST gelu<>+768(SB), Z8, Z9
	VMULPS      Z8, Z8, Z10
	VADDPS.BCST      gelu<>+800(SB), Z8, Z11
	VFMADD213PS Z11, Z10, Z9
	// × 2ⁿ: add n to the exponent bits
	VCVTPS2DQ   Z7, Z7
	VPSLLD      $23, Z7, Z7
	VPADDD      Z7, Z9, Z9
	// Z9 = x·φ(x); dx = dy·(Φ + x·φ)
	VMULPS.BCST      gelu<>+864(SB), Z9, Z9
	VMULPS      Z0, Z9, Z9
	VADDPS      Z9, Z3, Z3
	VMULPS      (DX), Z3, Z3
	VMOVUPS     Z3, (DI)
	ADDQ        $64, SI
	ADDQ        $64, DX
	ADDQ        $64, DI
	DECQ        CX
	JNZ         bloop512
bdone512:
	VZEROUPPER
	RET


// func expShiftAVX512(x *float32, n int, shift float32, sums *[8]float32)
//
// x[i] = e^(x[i]−shift) for n (a multiple of 16) floats with x[i] ≤ shift
// (exactly 0 below e^−87.34, as Exp), and sums[j] += Σ of lane j of
// each 8 in turn (the low half of a 16, then the high half), as the AVX2
// kernel adds them.
TEXT ·expShiftAVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS shift+16(FP), Z12
	MOVQ         sums+24(FP), DI
	VMOVUPS      (DI), Y13
	SHRQ         $4, CX
	JZ           edone512

eloop512:
	VMOVUPS      (SI), Z6
	VSUBPS       Z12, Z6, Z6
	VCMPPS.BCST  $0x1d, gelu<>+832(SB), Z6, K1
	VMAXPS.BCST       gelu<>+832(SB), Z6, Z6
	VMULPS.BCST       gelu<>+512(SB), Z6, Z7
	VRNDSCALEPS  $0, Z7, Z7
	VMOVAPS      Z6, Z8
	VFNMADD231PS.BCST gelu<>+544(SB), Z7, Z8
	VFNMADD231PS.BCST gelu<>+576(SB), Z7, Z8
	VBROADCASTSS      gelu<>+608(SB), Z9
	VFMADD213PS.BCST  gelu<>+640(SB), Z8, Z9
	VFMADD213PS.BCST  gelu<>+672(SB), Z8, Z9
	VFMADD213PS.BCST  gelu<>+704(SB), Z8, Z9
	VFMADD213PS.BCST  gelu<>+736(SB), Z8, Z9
	VFMADD213PS.BCST  gelu<>+768(SB), Z8, Z9
	VMULPS       Z8, Z8, Z10
	VADDPS.BCST       gelu<>+800(SB), Z8, Z11
	VFMADD213PS  Z11, Z10, Z9
	VCVTPS2DQ    Z7, Z7
	VPSLLD       $23, Z7, Z7
	VPADDD       Z7, Z9, Z9
	VMOVAPS.Z    Z9, K1, Z9
	VMOVUPS      Z9, (SI)
	VADDPS       Y9, Y13, Y13
	VEXTRACTF64X4 $1, Z9, Y15
	VADDPS       Y15, Y13, Y13
	ADDQ         $64, SI
	DECQ         CX
	JNZ          eloop512

edone512:
	VMOVUPS    Y13, (DI)
	VZEROUPPER
	RET
