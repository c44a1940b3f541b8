//! Control variables: every `WEFT_*` setting as MPI_T sees it (type, scope, choices), read
//! from the process's configuration; the collective algorithm choices (per communicator)
//! and the progress spin can be changed while the program runs.
#![forbid(unsafe_code)]

use std::sync::LazyLock;

use crate::coll::choice::{Collective, COLLECTIVES};
use crate::config::{Config, VARIABLES};
use crate::instance::Instance;
use crate::object::Comm;

/// Who must agree on a value, and whether it can change (MPI_T's scopes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Fixed when the process first initializes; never written through MPI_T.
    ReadOnly,
    /// Each process may set its own.
    Local,
    /// Every process of the bound communicator must set the same.
    GroupEq,
}

/// What a control variable is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bind {
    NoObject,
    Comm,
}

/// One control variable. Every value is a C `int`; `choices` makes it an enumeration whose
/// value is the index of the choice.
#[derive(Debug)]
pub struct Cvar {
    pub name: &'static str,
    pub desc: &'static str,
    pub choices: Option<Vec<&'static str>>,
    pub scope: Scope,
    pub bind: Bind,
    /// The category it belongs to (`categories`).
    pub category: &'static str,
}

/// Why a write was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum WriteError {
    /// The variable cannot be written (MPI_T_ERR_CVAR_SET_NEVER).
    Never,
    /// The value is out of the variable's range (MPI_T_ERR_INVALID).
    Invalid(String),
}

fn choices_of(name: &str) -> Option<Vec<&'static str>> {
    if let Some(c) = COLLECTIVES.iter().find(|c| c.variable() == name) {
        return Some(c.options());
    }
    Some(match name {
        "WEFT_PMI_VERSION" => vec!["auto", "1", "2"],
        "WEFT_SHM_LARGE" => vec!["auto", "pipeline", "cma"],
        "WEFT_IO_CB_READ" | "WEFT_IO_CB_WRITE" => vec!["automatic", "enable", "disable"],
        "WEFT_IO_ENGINE" => vec!["auto", "uring", "posix"],
        _ => return None,
    })
}

fn category_of(name: &str) -> &'static str {
    match name {
        n if n.starts_with("WEFT_COLL_") => "weft_coll",
        n if n.starts_with("WEFT_IO_") => "weft_io",
        n if n.starts_with("WEFT_SHM_") || n == "WEFT_EAGER_MAX" => "weft_transport",
        "WEFT_PROGRESS_SPIN" | "WEFT_NUM_VCIS" | "WEFT_MAX_STREAMS" => "weft_progress",
        _ => "weft_runtime",
    }
}

/// Every control variable, in `config::VARIABLES` order.
pub fn cvars() -> &'static [Cvar] {
    static ALL: LazyLock<Vec<Cvar>> = LazyLock::new(|| {
        VARIABLES
            .iter()
            .map(|v| {
                let coll = COLLECTIVES.iter().any(|c| c.variable() == v.name);
                Cvar {
                    name: v.name,
                    desc: v.meaning,
                    choices: choices_of(v.name),
                    scope: if coll {
                        Scope::GroupEq
                    } else if v.name == "WEFT_PROGRESS_SPIN" {
                        Scope::Local
                    } else {
                        Scope::ReadOnly
                    },
                    bind: if coll { Bind::Comm } else { Bind::NoObject },
                    category: category_of(v.name),
                }
            })
            .collect()
    });
    &ALL
}

/// The index of the variable called `name`.
pub fn index_of(name: &str) -> Option<usize> {
    cvars().iter().position(|c| c.name == name)
}

/// The current value of variable `index` (bound to `comm` when it is a communicator's).
pub fn read(index: usize, comm: Option<&Comm>) -> i64 {
    let var = &cvars()[index];
    if let (Some(coll), Some(comm)) = (collective(var.name), comm) {
        return coll.current(comm) as i64;
    }
    if var.name == "WEFT_PROGRESS_SPIN" {
        if let Some(n) = Instance::spin_set() {
            return n.into();
        }
        if let Some(inst) = Instance::live() {
            return inst.spin().into();
        }
    }
    value_in(&Instance::configuration(), var)
}

/// Set variable `index` (bound to `comm` when it is a communicator's) to `value`.
pub fn write(index: usize, comm: Option<&Comm>, value: i64) -> Result<(), WriteError> {
    let var = &cvars()[index];
    if var.scope == Scope::ReadOnly {
        return Err(WriteError::Never);
    }
    let out_of_range =
        |max: i64| WriteError::Invalid(format!("{} takes 0..={max}, not {value}", var.name));
    if let (Some(coll), Some(comm)) = (collective(var.name), comm) {
        let n = coll.options().len() as i64;
        if !(0..n).contains(&value) {
            return Err(out_of_range(n - 1));
        }
        coll.force(comm, value as usize);
        return Ok(());
    }
    if var.name == "WEFT_PROGRESS_SPIN" {
        let polls = u32::try_from(value).map_err(|_| out_of_range(u32::MAX.into()))?;
        Instance::set_spin(polls);
        return Ok(());
    }
    Err(WriteError::Never)
}

fn collective(name: &str) -> Option<Collective> {
    COLLECTIVES.iter().copied().find(|c| c.variable() == name)
}

/// The value of `var` in `config`: the choice's index for enumerations, the number for the
/// others (`auto` progress spin before initialization is -1, a default eager limit is the
/// cell payload).
fn value_in(config: &Config, var: &Cvar) -> i64 {
    if let Some(coll) = collective(var.name) {
        return config.coll.configured(coll) as i64;
    }
    let text = config
        .describe()
        .into_iter()
        .find(|(v, _)| v.name == var.name)
        .map(|(_, t)| t)
        .unwrap_or_default();
    if let Some(choices) = &var.choices {
        return choices.iter().position(|c| *c == text).unwrap_or(0) as i64;
    }
    match var.name {
        "WEFT_STATS" => config.stats.is_some().into(),
        "WEFT_TRACE" => config.trace.is_some().into(),
        "WEFT_EAGER_MAX" => crate::transport::eager_max(config) as i64,
        "WEFT_PROGRESS_SPIN" => config.progress_spin.map_or(-1, i64::from),
        _ => text.parse().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_is_a_cvar_with_its_value() {
        assert_eq!(cvars().len(), VARIABLES.len());
        let c = Config::default();
        let at = |n: &str| value_in(&c, &cvars()[index_of(n).unwrap()]);
        assert_eq!(at("WEFT_NUM_VCIS"), 1);
        assert_eq!(at("WEFT_SHM_CELL_SIZE"), 16384);
        assert_eq!(at("WEFT_SHM_LARGE"), 0);
        assert_eq!(at("WEFT_IO_CB_READ"), 0);
        assert_eq!(at("WEFT_PROGRESS_SPIN"), -1);
        assert_eq!(at("WEFT_COLL_BCAST"), 0);
        let bcast = &cvars()[index_of("WEFT_COLL_BCAST").unwrap()];
        assert_eq!(bcast.bind, Bind::Comm);
        assert_eq!(bcast.choices.as_ref().unwrap()[1], "binomial");
        assert_eq!(
            write(index_of("WEFT_NUM_VCIS").unwrap(), None, 2),
            Err(WriteError::Never)
        );
    }
}
