//! Hex encoding for values that PMI cannot carry as they are.
//!
//! PMI values may not contain spaces, semicolons or newlines and may not be empty, so
//! binary or structured values (addresses, process-set lists) travel hex-encoded.
#![forbid(unsafe_code)]

use crate::PmiError;

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Encodes bytes as lowercase hex, two digits per byte.
pub fn hex_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Decodes hex text (either case) back into bytes.
pub fn hex_decode(text: &str) -> Result<Vec<u8>, PmiError> {
    if text.len() & 1 == 1 {
        return Err(PmiError::malformed("hex text", "odd number of digits"));
    }
    text.as_bytes()
        .chunks(2)
        .map(|pair| Ok(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// The value of one hex digit.
fn digit(c: u8) -> Result<u8, PmiError> {
    char::from(c).to_digit(16).map(|d| d as u8).ok_or_else(|| {
        PmiError::malformed(
            "hex text",
            format!("{:?} is not a hex digit", char::from(c)),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(hex_decode(&hex_encode(&all)).unwrap(), all);
        assert_eq!(hex_encode(b"\x00\xffA"), "00ff41");
        assert_eq!(hex_decode("00FF41").unwrap(), b"\x00\xffA");
        assert_eq!(hex_decode("").unwrap(), b"");
    }

    #[test]
    fn bad_text_is_an_error() {
        assert!(hex_decode("abc").is_err());
        assert!(hex_decode("zz").is_err());
        assert!(hex_decode("é1").is_err());
    }
}
