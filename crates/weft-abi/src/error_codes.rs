//! Error codes as the C caller sees them. A failure inside the library becomes a code whose
//! low 16 bits are its class and whose upper bits pick a slot in a small ring of recent
//! messages, so `MPI_Error_string` can return the message that names the function, the
//! argument and the reason. Classes and user-defined codes pass through unchanged.

use std::ffi::c_int;
use std::sync::Mutex;

use weft_core::error::{self, ErrorClass, MpiError};

const RING: usize = 256;
const DETAIL_SHIFT: u32 = 16;

struct Ring {
    messages: Vec<Option<(c_int, String)>>,
    next: usize,
}

static MESSAGES: Mutex<Ring> = Mutex::new(Ring {
    messages: Vec::new(),
    next: 0,
});

/// The code to hand back for an error.
pub fn encode(err: &MpiError) -> c_int {
    if err.message.is_empty() || err.code > error::ERR_LASTCODE || err.code <= 0 {
        return err.code;
    }
    let mut ring = MESSAGES.lock().unwrap_or_else(|p| p.into_inner());
    if ring.messages.is_empty() {
        ring.messages.resize(RING, None);
    }
    let slot = ring.next;
    ring.next = (slot + 1) % RING;
    let code = ((slot as c_int + 1) << DETAIL_SHIFT) | err.code;
    ring.messages[slot] = Some((code, err.message.clone()));
    code
}

/// The class of a code, or `None` if the value is no valid error code.
pub fn class_of(code: c_int) -> Option<c_int> {
    let base = if code >> DETAIL_SHIFT != 0 && code > 0 {
        code & 0xffff
    } else {
        code
    };
    if base > error::ERR_LASTCODE && code >> DETAIL_SHIFT != 0 {
        return None;
    }
    error::class_of_code(base)
}

/// The text for a code.
pub fn string_of(code: c_int) -> Option<String> {
    let class = class_of(code)?;
    if code > 0 && code >> DETAIL_SHIFT != 0 {
        let ring = MESSAGES.lock().unwrap_or_else(|p| p.into_inner());
        let slot = (code >> DETAIL_SHIFT) as usize - 1;
        if let Some(Some((c, message))) = ring.messages.get(slot) {
            if *c == code {
                return Some(message.clone());
            }
        }
    }
    if let Some(text) = error::user_string(code) {
        return Some(text);
    }
    if let Some((name, meaning)) = error::tool_class(class) {
        return Some(format!("{name}: {meaning}"));
    }
    match ErrorClass::from_i32(class) {
        Some(c) => Some(format!("{}: {}", c.name(), c.description())),
        None => Some(
            error::user_string(class)
                .unwrap_or_else(|| format!("user-defined error class {class}")),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detailed_codes_keep_class_and_message() {
        let e = MpiError::new(ErrorClass::Count, "MPI_Send(count=-1): negative count");
        let code = encode(&e);
        assert_ne!(code, ErrorClass::Count as c_int);
        assert_eq!(class_of(code), Some(ErrorClass::Count as c_int));
        assert_eq!(
            string_of(code).unwrap(),
            "MPI_Send(count=-1): negative count"
        );
    }

    #[test]
    fn classes_describe_themselves() {
        assert_eq!(class_of(5), Some(5));
        assert!(string_of(5).unwrap().contains("MPI_ERR_COMM"));
        assert_eq!(class_of(0x3000), None);
        assert_eq!(class_of(-7), None);
        assert_eq!(string_of(0).unwrap(), "MPI_SUCCESS: no error");
        assert_eq!(class_of(1007), Some(1007));
        assert!(string_of(1007)
            .unwrap()
            .starts_with("MPI_T_ERR_INVALID_INDEX"));
        assert_eq!(class_of(1019), None);
    }
}
