// Conv (§2.9.1), depthwise 2-D form staged through workgroup memory (groups == Cin == Cout, a
// trivial depth dim): one workgroup per TH x TW tile of output positions of one (n, c) plane.
// The input window of the tile, halo included, is read once with coalesced row loads into
// `tile` (zeros outside the input, never multiplied), then each invocation computes four
// consecutive outputs of one row from it. Reading each input element about once (plus the halo)
// instead of once per tap that covers it is what makes this form bandwidth-bound.
//
// Taps whose input lies in the padding are skipped, as in every Conv kernel (`taps` gives each
// output's in-range tap box), so a non-finite weight never meets the padding. The lowering gives
// this form only shapes whose staged window fits SMAX elements; the staging loop and the tap
// loops step a counter towards a bound that cannot wrap.

const TW: u32 = 64u;
const TH: u32 = 16u;
const SMAX: u32 = 4096u;

var<workgroup> tile: array<f32, SMAX>;

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
    let n_in = min(ih * iw, SMAX);
    // Cin == Cout: the plane index is also the input channel's.
    let xc = plane * p.in_total;
    for (var e = li; e < n_in; e = e + 256u) {
        let y = iy0 + i32(e / iw);
        let x = ix0 + i32(e % iw);
        var v = 0.0;
        if (y >= 0 && y < i32(p.in_sp.y) && x >= 0 && x < i32(p.in_sp.z)) {
            v = f32(ld_x(xc + u32(y) * p.in_sp.z + u32(x)));
        }
        tile[e] = v;
    }
    workgroupBarrier();
    let ty = li / (TW / 4u);
    let tx = (li % (TW / 4u)) * 4u;
    let oy = oy0 + ty;
    if (oy >= p.out_sp.y) {
        return;
    }
    let rh = taps(i32(oy * sh) - i32(p.pads.y), p.dilation.y, p.k.y, p.in_sp.y);
    let wc = co * p.k_total;
    let b = f32(bias_of(co));
    let obase = plane * p.out_sp.y * p.out_sp.z + oy * p.out_sp.z;
    for (var j = 0u; j < 4u; j = j + 1u) {
        let ox = ox0 + tx + j;
        if (ox >= p.out_sp.z) {
            break;
        }
        let rw = taps(i32(ox * sw) - i32(p.pads.z), p.dilation.z, p.k.z, p.in_sp.z);
        var acc = b;
        for (var kh = rh.x; kh < rh.y; kh = kh + 1u) {
            let row = (ty * sh + kh * p.dilation.y) * iw + (tx + j) * sw;
            let wh = wc + kh * p.k.z;
            for (var kw = rw.x; kw < rw.y; kw = kw + 1u) {
                acc = acc + f32(ld_w(wh + kw)) * tile[min(row + kw * p.dilation.z, SMAX - 1u)];
            }
        }
        st_out(obase + ox, F(acc));
    }
}
