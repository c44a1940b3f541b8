//! What the MPI tool information interface (MPI_T) shows, without C types: control
//! variables (`cvars`), performance variables (`pvars`), the categories that group them and
//! the events (`crate::events`). The ABI's `api/mpit/` serves them to C.
#![forbid(unsafe_code)]

pub mod cvars;
pub mod pvars;

use crate::events::EventKind;

/// A category: a named group of variables and events.
pub struct Category {
    pub name: &'static str,
    pub desc: &'static str,
}

/// Every category; `weft` holds the others.
pub const CATEGORIES: &[Category] = &[
    Category {
        name: "weft",
        desc: "everything Weft shows through MPI_T",
    },
    Category {
        name: "weft_runtime",
        desc: "launcher connection and error reporting",
    },
    Category {
        name: "weft_progress",
        desc: "VCIs and the progress engine",
    },
    Category {
        name: "weft_transport",
        desc: "the shared-memory transport and the eager limit",
    },
    Category {
        name: "weft_pt2pt",
        desc: "point-to-point messages, protocols and matching queues",
    },
    Category {
        name: "weft_coll",
        desc: "collective algorithms: choices and counts per communicator",
    },
    Category {
        name: "weft_io",
        desc: "MPI-IO defaults and engine",
    },
];

/// Index of category `name`.
pub fn category_index(name: &str) -> Option<usize> {
    CATEGORIES.iter().position(|c| c.name == name)
}

/// The control variables of category `cat`.
pub fn category_cvars(cat: usize) -> Vec<usize> {
    let name = CATEGORIES[cat].name;
    (0..cvars::cvars().len())
        .filter(|&i| cvars::cvars()[i].category == name)
        .collect()
}

/// The performance variables of category `cat`.
pub fn category_pvars(cat: usize) -> Vec<usize> {
    let name = CATEGORIES[cat].name;
    (0..pvars::pvars().len())
        .filter(|&i| pvars::pvars()[i].category == name)
        .collect()
}

/// The subcategories of category `cat`.
pub fn category_subcategories(cat: usize) -> Vec<usize> {
    if cat == 0 {
        (1..CATEGORIES.len()).collect()
    } else {
        Vec::new()
    }
}

/// The events of category `cat`.
pub fn category_events(cat: usize) -> Vec<usize> {
    if CATEGORIES[cat].name == "weft_pt2pt" {
        (0..EVENTS.len()).collect()
    } else {
        Vec::new()
    }
}

/// An event type as MPI_T describes it: its name, what it means and its fields (each an
/// `i64`: name and meaning).
pub struct EventType {
    pub kind: EventKind,
    pub name: &'static str,
    pub desc: &'static str,
    pub fields: [&'static str; 4],
}

pub const EVENTS: &[EventType] = &[
    EventType {
        kind: EventKind::UnexpectedArrival,
        name: "weft_unexpected_arrival",
        desc: "a message arrived that no posted receive matched (it waits in the unexpected queue)",
        fields: ["context_id", "source", "tag", "bytes"],
    },
    EventType {
        kind: EventKind::RendezvousStart,
        name: "weft_rendezvous_start",
        desc: "a send started the rendezvous protocol (its data waits for the receiver)",
        fields: ["context_id", "dest_job_rank", "tag", "bytes"],
    },
];
