//! The inputs and params of one invocation, gathered from `--input`, `--params` and `--random`
//! against an executable's signature. Unknown or missing names are errors that list what the
//! graph expects; dtype and shape mismatches are left to the backend, whose errors name the slot
//! (we add the file).

use crate::args::DataArgs;
use crate::io::{is_gguf, load_gguf_params, load_npy, load_params, NamedTensor};
use crate::random::random_tensor;
use anyhow::{bail, Context, Result};
use backend_api::{Dim, Executable, Signature, Slot, TensorView};
use backend_cpu_ref::CpuRefOptions;

/// The data of one invocation.
pub struct Feeds {
    /// Graph inputs, in signature order.
    pub inputs: Vec<NamedTensor>,
    /// Params, in signature order.
    pub params: Vec<NamedTensor>,
}

impl Feeds {
    /// `(name, view)` of every input, as `Executable::run` takes them.
    pub fn input_views(&self) -> Vec<(&str, TensorView<'_>)> {
        self.inputs.iter().map(|n| (n.name.as_str(), n.tensor.view())).collect()
    }

    /// `(name, view)` of every param.
    pub fn param_views(&self) -> Vec<(&str, TensorView<'_>)> {
        self.params.iter().map(|n| (n.name.as_str(), n.tensor.view())).collect()
    }

    /// Uploads every param; an error names the param and the file it came from.
    pub fn set_params(&self, exe: &mut dyn Executable) -> Result<()> {
        for p in &self.params {
            exe.set_param(&p.name, p.tensor.view()).with_context(|| format!("param {:?} from {}", p.name, p.source))?;
        }
        Ok(())
    }

    /// Adds which file each input came from to a run error (the backend names only the input).
    pub fn explain_run_error(&self, e: backend_api::Error) -> anyhow::Error {
        let sources: Vec<String> = self.inputs.iter().map(|i| format!("{} from {}", i.name, i.source)).collect();
        anyhow::Error::new(e).context(format!("run failed (inputs: {})", sources.join(", ")))
    }
}

/// `name: DTYPE[dims]` of each slot, one per line, for error messages.
pub fn describe_slots(slots: &[Slot]) -> String {
    if slots.is_empty() {
        return "  (none)".to_string();
    }
    slots.iter().map(|s| format!("  {}: {}{}", s.name, s.dtype, s.shape)).collect::<Vec<_>>().join("\n")
}

/// Gathers inputs and params for `sig` from the command line's data arguments.
pub fn gather(sig: &Signature, data: &DataArgs) -> Result<Feeds> {
    let mut inputs = given_inputs(sig, data)?;
    let mut params = match &data.params {
        Some(path) if is_gguf(path) => load_gguf_params(path, &sig.params)?,
        Some(path) => load_params(path)?,
        None => Vec::new(),
    };
    check_known("param", &params, &sig.params, data.params.as_deref().map(|p| p.display().to_string()))?;
    let mut missing = Vec::new();
    let bindings = symbol_bindings(sig, data, &inputs);
    let mut budget = RandomBudget::new(data);
    for slot in &sig.inputs {
        if !inputs.iter().any(|i| i.name == slot.name) {
            match data.random {
                true => inputs.push(random_input(slot, data.seed, &bindings, &mut budget)?),
                false => missing.push(format!("input {}: {}{}", slot.name, slot.dtype, slot.shape)),
            }
        }
    }
    for slot in &sig.params {
        if !params.iter().any(|p| p.name == slot.name) {
            match data.random {
                true => params.push(random_input(slot, data.seed, &bindings, &mut budget)?),
                false => missing.push(format!("param {}: {}{}", slot.name, slot.dtype, slot.shape)),
            }
        }
    }
    if !missing.is_empty() {
        bail!(
            "missing data for the graph:\n  {}\ngive inputs with --input NAME=FILE.npy, params with --params DIR|FILE.npz|FILE.gguf, \
             or fill the rest with --random",
            missing.join("\n  ")
        );
    }
    let order =
        |slots: &[Slot], v: &mut Vec<NamedTensor>| v.sort_by_key(|n| slots.iter().position(|s| s.name == n.name));
    order(&sig.inputs, &mut inputs);
    order(&sig.params, &mut params);
    Ok(Feeds { inputs, params })
}

/// Reads the `--input` files, rejecting unknown and repeated names.
fn given_inputs(sig: &Signature, data: &DataArgs) -> Result<Vec<NamedTensor>> {
    let mut out: Vec<NamedTensor> = Vec::new();
    for (name, path) in &data.inputs {
        if out.iter().any(|i| &i.name == name) {
            bail!("--input {name} is given twice");
        }
        let tensor = load_npy(path).with_context(|| format!("input {name:?}"))?;
        out.push(NamedTensor { name: name.clone(), tensor, source: path.display().to_string() });
    }
    check_known("input", &out, &sig.inputs, None)?;
    Ok(out)
}

/// Errs on a name the graph does not declare, listing what it declares.
fn check_known(what: &str, given: &[NamedTensor], slots: &[Slot], from: Option<String>) -> Result<()> {
    let unknown: Vec<String> = given
        .iter()
        .filter(|g| !slots.iter().any(|s| s.name == g.name))
        .map(|g| format!("{} (from {})", g.name, g.source))
        .collect();
    if !unknown.is_empty() {
        let origin = from.map(|f| format!(" in {f}")).unwrap_or_default();
        bail!("unknown {what}{origin}: {}; the graph's {what}s are:\n{}", unknown.join(", "), describe_slots(slots));
    }
    Ok(())
}

/// Symbol sizes for random data: `--dim` first, then whatever the given input files bind.
fn symbol_bindings(sig: &Signature, data: &DataArgs, given: &[NamedTensor]) -> Vec<(String, usize)> {
    let mut b = data.dims.clone();
    for g in given {
        let Some(slot) = sig.inputs.iter().find(|s| s.name == g.name) else { continue };
        if slot.shape.rank() != g.tensor.shape().len() {
            continue; // the backend reports the rank mismatch
        }
        for (d, &n) in slot.shape.dims().iter().zip(g.tensor.shape()) {
            if let Dim::Sym(s) = d {
                if !b.iter().any(|(k, _)| k == s) {
                    b.push((s.clone(), n));
                }
            }
        }
    }
    b
}

/// What is left of the `--max-memory` cap on the data `--random` generates.
struct RandomBudget {
    left: u64,
}

impl RandomBudget {
    /// The cap of `--max-memory`, by default cpu-ref's default cap (half of physical memory).
    fn new(data: &DataArgs) -> RandomBudget {
        let cap = data.max_memory.unwrap_or_else(|| CpuRefOptions::default().max_memory_bytes);
        RandomBudget { left: cap }
    }
}

/// A random tensor for `slot`, its symbolic dims bound by `bindings`, its bytes taken from `budget`.
fn random_input(
    slot: &Slot,
    seed: u64,
    bindings: &[(String, usize)],
    budget: &mut RandomBudget,
) -> Result<NamedTensor> {
    let mut dims = Vec::with_capacity(slot.shape.rank());
    for d in slot.shape.dims() {
        dims.push(match d {
            Dim::Static(n) => *n,
            Dim::Sym(s) => match bindings.iter().find(|(k, _)| k == s) {
                Some((_, n)) => *n,
                None => bail!(
                    "--random: {:?} has shape {} and symbol {s:?} is not bound; give --dim {s}=N",
                    slot.name,
                    slot.shape
                ),
            },
        });
    }
    let tensor = random_tensor(seed, &slot.name, slot.dtype, &dims, budget.left)?;
    let used = u64::try_from(tensor.bytes().len()).unwrap_or(u64::MAX);
    budget.left = budget.left.saturating_sub(used);
    Ok(NamedTensor { name: slot.name.clone(), tensor, source: "random".to_string() })
}
