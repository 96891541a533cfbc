//! If, While and Scan against the same computation written without control flow: random
//! elementwise bodies (each new loop value a binary op of two current values or of one and a
//! constant), random trip counts, bounds and start values, forward and reverse scans with stacked
//! outputs and trajectories. The plain graph applies the same ops in the same order, so the
//! results must be bit-identical.

use backend_api::op::{BinaryOp, CompareOp};
use backend_api::{Backend, DType, Graph, GraphBuilder, Tensor, Value};
use backend_cpu_ref::CpuRefBackend;

/// Small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn float(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
    fn floats(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.float()).collect()
    }
}

const OPS: [BinaryOp; 5] = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Max, BinaryOp::Min];

/// One new value: `op(values[a], values[b])`, or `op(values[a], constant)`.
#[derive(Clone)]
struct Step {
    op: BinaryOp,
    a: usize,
    b: Result<usize, Vec<f32>>,
}

/// A body over `k` values of `n` elements (plus `extra` read-only values it may read).
fn plan(rng: &mut Rng, k: usize, extra: usize, n: usize) -> Vec<Step> {
    (0..k)
        .map(|_| Step {
            op: OPS[rng.below(OPS.len())],
            a: rng.below(k + extra),
            b: if rng.below(3) == 0 { Err(rng.floats(n)) } else { Ok(rng.below(k + extra)) },
        })
        .collect()
}

/// The new values of `plan` from `vals` (the loop values, then the extra ones).
fn apply(g: &mut GraphBuilder, plan: &[Step], vals: &[Value], n: usize) -> Vec<Value> {
    plan.iter()
        .map(|s| {
            let b = match &s.b {
                Ok(i) => vals[*i],
                Err(c) => g.constant(&Tensor::from_slice(&[n], c).unwrap()).unwrap(),
            };
            g.binary(s.op, vals[s.a], b).unwrap()
        })
        .collect()
}

fn run(g: &Graph, inputs: &[(&str, &Tensor)]) -> Vec<Tensor> {
    let mut exe = CpuRefBackend::new().compile(g, &Default::default()).unwrap();
    let views: Vec<_> = inputs.iter().map(|(name, t)| (*name, t.view())).collect();
    exe.run(&views).unwrap()
}

/// Bit-identical tensors.
fn same(label: &str, got: &[Tensor], want: &[Tensor]) {
    assert_eq!(got.len(), want.len(), "{label}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!((g.dtype(), g.shape()), (w.dtype(), w.shape()), "{label}: output {i}");
        assert_eq!(g.bytes(), w.bytes(), "{label}: output {i}");
    }
}

fn inputs_named(g: &mut GraphBuilder, prefix: &str, k: usize, n: usize) -> Vec<Value> {
    (0..k).map(|i| g.input(&format!("{prefix}{i}"), DType::F32, vec![n]).unwrap()).collect()
}

#[test]
fn while_equals_its_unrolled_loop() {
    let mut rng = Rng(0x5eed_0001);
    for case in 0..24 {
        let (k, n) = (1 + rng.below(3), 1 + rng.below(5));
        let body_plan = plan(&mut rng, k, 0, n);
        let (start, limit, max_it) = (rng.below(4) as i32, rng.below(9) as i32, rng.below(8) as u64);
        let cond = {
            let mut g = GraphBuilder::new();
            let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
            let _v = inputs_named(&mut g, "v", k, n);
            let l = g.constant(&Tensor::scalar(limit)).unwrap();
            let c = g.compare(CompareOp::Lt, i, l).unwrap();
            g.output(c).unwrap();
            g.build().unwrap()
        };
        let body = {
            let mut g = GraphBuilder::new();
            let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
            let v = inputs_named(&mut g, "v", k, n);
            let one = g.constant(&Tensor::scalar(1i32)).unwrap();
            let i1 = g.binary(BinaryOp::Add, i, one).unwrap();
            g.output(i1).unwrap();
            for o in apply(&mut g, &body_plan, &v, n) {
                g.output(o).unwrap();
            }
            g.build().unwrap()
        };
        let mut looped = GraphBuilder::new();
        let i0 = looped.input("i0", DType::I32, Vec::<usize>::new()).unwrap();
        let v0 = inputs_named(&mut looped, "x", k, n);
        let init: Vec<Value> = std::iter::once(i0).chain(v0).collect();
        for o in looped.while_(&init, cond, body, max_it).unwrap() {
            looped.output(o).unwrap();
        }
        // unrolled: min(max_it, limit − start) bodies (none when start ≥ limit)
        let trips = (i64::from(limit) - i64::from(start)).clamp(0, max_it as i64) as usize;
        let mut plain = GraphBuilder::new();
        let mut i = plain.input("i0", DType::I32, Vec::<usize>::new()).unwrap();
        let mut v = inputs_named(&mut plain, "x", k, n);
        for _ in 0..trips {
            let one = plain.constant(&Tensor::scalar(1i32)).unwrap();
            i = plain.binary(BinaryOp::Add, i, one).unwrap();
            v = apply(&mut plain, &body_plan, &v, n);
        }
        plain.output(i).unwrap();
        for o in v {
            plain.output(o).unwrap();
        }
        let xs: Vec<Tensor> = (0..k).map(|_| Tensor::from_slice(&[n], &rng.floats(n)).unwrap()).collect();
        let names: Vec<String> = (0..k).map(|j| format!("x{j}")).collect();
        let i0t = Tensor::scalar(start);
        let mut feeds: Vec<(&str, &Tensor)> = vec![("i0", &i0t)];
        feeds.extend(names.iter().map(String::as_str).zip(&xs));
        let label = format!("case {case}: k {k} n {n} start {start} limit {limit} max {max_it}");
        same(&label, &run(&looped.build().unwrap(), &feeds), &run(&plain.build().unwrap(), &feeds));
    }
}

#[test]
fn scan_equals_its_unrolled_loop() {
    let mut rng = Rng(0x5eed_0002);
    for case in 0..24 {
        let (k, n, length) = (1 + rng.below(3), 1 + rng.below(4), rng.below(6));
        let (reverse, trajectory) = (rng.below(2) == 1, rng.below(2) == 1);
        // the body reads the carries, then one broadcast value and the step slice
        let body_plan = plan(&mut rng, k, 2, n);
        let body = {
            let mut g = GraphBuilder::new();
            let mut vals = inputs_named(&mut g, "c", k, n);
            vals.push(g.input("b", DType::F32, vec![n]).unwrap());
            vals.push(g.input("x", DType::F32, vec![n]).unwrap());
            let next = apply(&mut g, &body_plan, &vals, n);
            for o in &next {
                g.output(*o).unwrap();
            }
            // one per-step value: the first new carry times the step slice
            let y = g.binary(BinaryOp::Mul, next[0], vals[k + 1]).unwrap();
            g.output(y).unwrap();
            g.build().unwrap()
        };
        let mut looped = GraphBuilder::new();
        let c0 = inputs_named(&mut looped, "c", k, n);
        let b = looped.input("b", DType::F32, vec![n]).unwrap();
        let xs = looped.input("xs", DType::F32, vec![length, n]).unwrap();
        let outs = looped.scan(body, length as u64, reverse, (&c0, &[b], &[xs]), trajectory).unwrap();
        for o in outs {
            looped.output(o).unwrap();
        }
        // unrolled: the same steps in the same order, the stacks made by Concat in row order
        let mut plain = GraphBuilder::new();
        let mut carry = inputs_named(&mut plain, "c", k, n);
        let b = plain.input("b", DType::F32, vec![n]).unwrap();
        let xs = plain.input("xs", DType::F32, vec![length, n]).unwrap();
        let mut ys: Vec<Option<Value>> = vec![None; length];
        let mut traj: Vec<Vec<Option<Value>>> = vec![vec![None; length]; k];
        for s in 0..length {
            let t = if reverse { length - 1 - s } else { s };
            let row = plain.narrow(xs, 0, t as i64, 1, 1).unwrap();
            let x = plain.reshape(row, &[n as i64]).unwrap();
            let vals: Vec<Value> = carry.iter().copied().chain([b, x]).collect();
            carry = apply(&mut plain, &body_plan, &vals, n);
            let y = plain.binary(BinaryOp::Mul, carry[0], x).unwrap();
            ys[t] = Some(plain.reshape(y, &[1, n as i64]).unwrap());
            for (j, c) in carry.iter().enumerate() {
                traj[j][t] = Some(plain.reshape(*c, &[1, n as i64]).unwrap());
            }
        }
        for c in &carry {
            plain.output(*c).unwrap();
        }
        let stack = |g: &mut GraphBuilder, rows: &[Option<Value>]| -> Value {
            let rows: Vec<Value> = rows.iter().map(|r| r.unwrap()).collect();
            g.concat(&rows, 0).unwrap()
        };
        if length > 0 {
            let y = stack(&mut plain, &ys);
            plain.output(y).unwrap();
            if trajectory {
                for rows in &traj {
                    let t = stack(&mut plain, rows);
                    plain.output(t).unwrap();
                }
            }
        }
        let cs: Vec<Tensor> = (0..k).map(|_| Tensor::from_slice(&[n], &rng.floats(n)).unwrap()).collect();
        let bt = Tensor::from_slice(&[n], &rng.floats(n)).unwrap();
        let xt = Tensor::from_slice(&[length, n], &rng.floats(length * n)).unwrap();
        let names: Vec<String> = (0..k).map(|j| format!("c{j}")).collect();
        let mut feeds: Vec<(&str, &Tensor)> = names.iter().map(String::as_str).zip(&cs).collect();
        feeds.extend([("b", &bt), ("xs", &xt)]);
        let label = format!("case {case}: k {k} n {n} length {length} reverse {reverse} trajectory {trajectory}");
        let got = run(&looped.build().unwrap(), &feeds);
        if length == 0 {
            // the carries unchanged, then empty stacks
            same(&label, &got[..k], &cs);
            assert!(got[k..].iter().all(|t| t.shape() == [0, n]), "{label}");
            continue;
        }
        same(&label, &got, &run(&plain.build().unwrap(), &feeds));
    }
}

#[test]
fn if_equals_the_selected_branch_inlined() {
    let mut rng = Rng(0x5eed_0003);
    for case in 0..16 {
        let (k, n) = (1 + rng.below(3), 1 + rng.below(5));
        let (pt, pe) = (plan(&mut rng, k, 0, n), plan(&mut rng, k, 0, n));
        let branch = |p: &[Step]| {
            let mut g = GraphBuilder::new();
            let v = inputs_named(&mut g, "v", k, n);
            for o in apply(&mut g, p, &v, n) {
                g.output(o).unwrap();
            }
            g.build().unwrap()
        };
        let take = rng.below(2) == 1;
        let mut with_if = GraphBuilder::new();
        let c = with_if.input("c", DType::Bool, Vec::<usize>::new()).unwrap();
        let v = inputs_named(&mut with_if, "x", k, n);
        for o in with_if.if_(c, &v, branch(&pt), branch(&pe)).unwrap() {
            with_if.output(o).unwrap();
        }
        let mut plain = GraphBuilder::new();
        let v = inputs_named(&mut plain, "x", k, n);
        for o in apply(&mut plain, if take { &pt } else { &pe }, &v, n) {
            plain.output(o).unwrap();
        }
        let xs: Vec<Tensor> = (0..k).map(|_| Tensor::from_slice(&[n], &rng.floats(n)).unwrap()).collect();
        let names: Vec<String> = (0..k).map(|j| format!("x{j}")).collect();
        let ct = Tensor::from_bytes(DType::Bool, &[], vec![u8::from(take)]).unwrap();
        let mut feeds: Vec<(&str, &Tensor)> = names.iter().map(String::as_str).zip(&xs).collect();
        let plain_out = run(&plain.build().unwrap(), &feeds);
        feeds.push(("c", &ct));
        same(&format!("case {case}: take {take}"), &run(&with_if.build().unwrap(), &feeds), &plain_out);
    }
}
