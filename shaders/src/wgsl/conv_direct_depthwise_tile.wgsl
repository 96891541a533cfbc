// Conv (§2.9.1), depthwise 2-D form staged through workgroup memory (groups == Cin == Cout, a
// trivial depth dim): one workgroup per TH x TW tile of output positions of one (n, c) plane.
// The input window of the tile, halo included, is read once into `tile` (zeros outside the
// input), then each invocation computes four consecutive outputs in each of two rows from it.
// Reading each input element about once (plus the halo) instead of once per tap that covers it
// is the point of this form.
//
// Taps whose input lies in the padding must contribute nothing even against a NaN or infinite
// weight (docs/DECISIONS.md). The channel's weights are staged too, with a flag set when one is
// not finite: a finite channel multiplies the staged zeros of the padding (the same sum) and runs
// every tap with no bounds test; a non-finite one takes the slow path, which gives each output
// only its in-range tap box (`taps`). The lowering gives this form only shapes whose window fits
// SMAX elements and whose kernel fits KMAX taps; the loops step a counter towards a bound that
// cannot wrap.

const TW: u32 = 64u;
const TH: u32 = 32u;
const SMAX: u32 = 4096u;
const KMAX: u32 = 256u;

var<workgroup> tile: array<f32, SMAX>;
var<workgroup> wts: array<f32, KMAX>;
// 1 when a weight of the channel is NaN or ±∞.
var<workgroup> odd: atomic<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    // p.total tiles: planes (n, c) x tiles per plane (p.quads across, ⌈H/TH⌉ down), workgroup
    // ids folded into two dims; the id is the same for the whole workgroup.
    let wid = wg.x + wg.y * nwg.x;
    if (wid >= p.total) {
        return;
    }
    let across = p.quads;
    let per_plane = across * ((p.out_sp.y + TH - 1u) / TH);
    let plane = wid / per_plane;
    let tt = wid % per_plane;
    let oy0 = (tt / across) * TH;
    let ox0 = (tt % across) * TW;
    let co = plane % p.cout;
    let sh = p.stride.y;
    let sw = p.stride.z;
    let iy0 = i32(oy0 * sh) - i32(p.pads.y);
    let ix0 = i32(ox0 * sw) - i32(p.pads.z);
    let ih = (TH - 1u) * sh + (p.k.y - 1u) * p.dilation.y + 1u;
    let iw = (TW - 1u) * sw + (p.k.z - 1u) * p.dilation.z + 1u;
    // Cin == Cout: the plane index is also the input channel's.
    let xc = plane * p.in_total;
    // the channel's weights, loaded while the window's loads are in flight
    let wc = co * p.k_total;
    var wv = 0.0;
    if (li < min(p.k_total, KMAX)) {
        wv = f32(ld_w(wc + li));
    }
    // Element e = li + 256·m of the window (row-major, iw columns) for m < SMAX / 256: all of an
    // invocation's loads are issued before any is stored (a fixed trip count the compiler
    // unrolls), and each (row, column) steps from the last without a division.
    let n_in = min(ih * iw, SMAX);
    let dr = 256u / iw;
    let dc = 256u % iw;
    var r = li / iw;
    var c = li % iw;
    var vals: array<f32, SMAX / 256u>;
    for (var m = 0u; m < SMAX / 256u; m = m + 1u) {
        let y = iy0 + i32(r);
        let x = ix0 + i32(c);
        var v = 0.0;
        if (li + m * 256u < n_in && y >= 0 && y < i32(p.in_sp.y) && x >= 0 && x < i32(p.in_sp.z)) {
            v = f32(ld_x(xc + u32(y) * p.in_sp.z + u32(x)));
        }
        vals[m] = v;
        c = c + dc;
        r = r + dr;
        if (c >= iw) {
            c = c - iw;
            r = r + 1u;
        }
    }
    for (var m = 0u; m < SMAX / 256u; m = m + 1u) {
        let e = li + m * 256u;
        if (e < n_in) {
            tile[e] = vals[m];
        }
    }
    if (li < min(p.k_total, KMAX)) {
        wts[li] = wv;
        if (f32_is_nan(wv) || f32_is_inf(wv)) {
            atomicOr(&odd, 1u);
        }
    }
    workgroupBarrier();
    let finite = atomicLoad(&odd) == 0u;
    let tx = (li % (TW / 4u)) * 4u;
    let b = f32(bias_of(co));
    // rows li / 16 and li / 16 + 16 of the tile, four outputs each
    for (var half = 0u; half < TH / 16u; half = half + 1u) {
        let ty = li / (TW / 4u) + 16u * half;
        let oy = oy0 + ty;
        if (oy >= p.out_sp.y) {
            break;
        }
        let obase = plane * p.out_sp.y * p.out_sp.z + oy * p.out_sp.z;
        let live = min(4u, p.out_sp.z - min(p.out_sp.z, ox0 + tx));
        if (finite) {
            // every tap, the padding's staged zeros included
            var acc = vec4<f32>(b);
            for (var kh = 0u; kh < p.k.y; kh = kh + 1u) {
                let row = (ty * sh + kh * p.dilation.y) * iw + tx * sw;
                for (var kw = 0u; kw < p.k.z; kw = kw + 1u) {
                    let wv = wts[min(kh * p.k.z + kw, KMAX - 1u)];
                    let at = row + kw * p.dilation.z;
                    acc.x = acc.x + wv * tile[min(at, SMAX - 1u)];
                    acc.y = acc.y + wv * tile[min(at + sw, SMAX - 1u)];
                    acc.z = acc.z + wv * tile[min(at + 2u * sw, SMAX - 1u)];
                    acc.w = acc.w + wv * tile[min(at + 3u * sw, SMAX - 1u)];
                }
            }
            for (var j = 0u; j < live; j = j + 1u) {
                st_out(obase + ox0 + tx + j, F(acc[j]));
            }
            continue;
        }
        // a non-finite weight: each output's in-range taps only
        let rh = taps(i32(oy * sh) - i32(p.pads.y), p.dilation.y, p.k.y, p.in_sp.y);
        for (var j = 0u; j < live; j = j + 1u) {
            let ox = ox0 + tx + j;
            let rw = taps(i32(ox * sw) - i32(p.pads.z), p.dilation.z, p.k.z, p.in_sp.z);
            var acc = b;
            for (var kh = rh.x; kh < rh.y; kh = kh + 1u) {
                let row = (ty * sh + kh * p.dilation.y) * iw + (tx + j) * sw;
                for (var kw = rw.x; kw < rw.y; kw = kw + 1u) {
                    let wv = wts[min(kh * p.k.z + kw, KMAX - 1u)];
                    acc = acc + wv * tile[min(row + kw * p.dilation.z, SMAX - 1u)];
                }
            }
            st_out(obase + ox, F(acc));
        }
    }
}
