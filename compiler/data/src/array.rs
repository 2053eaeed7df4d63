//! One NumPy array as read from a `.npy` stream: its dtype, shape and values, in the few
//! value kinds wsel can convert from. The header alone ([`Header`]) is enough to check a file
//! against a declaration without reading its values.

use std::io::{Chain, Cursor, Read};

/// A NumPy array: `dtype` is NumPy's name (`float32`, `int64`, ...), the values row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub dtype: String,
    pub shape: Vec<u64>,
    pub values: Values,
}

/// The values of an array, by kind: every integer width is read as `i64`.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    F16(Vec<half::f16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Int(Vec<i64>),
    /// A dtype wsel does not read (complex, strings, records, ...).
    Other,
}

/// What a `.npy` header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// NumPy's name of the dtype, or its descriptor when it has none here.
    pub dtype: String,
    pub shape: Vec<u64>,
    /// Stored in Fortran (column-major) order.
    pub fortran: bool,
}

/// Reads the header of a `.npy` stream.
pub fn read_header(reader: impl Read) -> Result<Header, String> {
    let npy = open(reader)?;
    Ok(Header {
        dtype: dtype_name(&type_code(&npy.dtype())),
        shape: npy.shape().to_vec(),
        fortran: npy.order() == npyz::Order::Fortran,
    })
}

/// Reads a whole `.npy` stream. Arrays in Fortran order are refused with a hint.
pub fn read_array(reader: impl Read) -> Result<Array, String> {
    let npy = open(reader)?;
    if npy.order() == npyz::Order::Fortran {
        return Err(
            "the array is stored in Fortran order; save it with `np.ascontiguousarray`".into(),
        );
    }
    let shape = npy.shape().to_vec();
    let code = type_code(&npy.dtype());
    let kind = code.trim_start_matches(['<', '>', '|', '=']);
    let values = match kind {
        "f2" => Values::F16(values(npy)?),
        "f4" if code.starts_with('<') => Values::F32(f32_le(npy)?),
        "f4" => Values::F32(values(npy)?),
        "f8" => Values::F64(values(npy)?),
        "i1" => ints::<i8>(npy)?,
        "i2" => ints::<i16>(npy)?,
        "i4" => ints::<i32>(npy)?,
        "i8" => ints::<i64>(npy)?,
        "u1" => ints::<u8>(npy)?,
        "u2" => ints::<u16>(npy)?,
        "u4" => ints::<u32>(npy)?,
        "u8" => {
            let wide: Vec<u64> = values(npy)?;
            let values: Result<Vec<i64>, _> = wide.into_iter().map(i64::try_from).collect();
            Values::Int(values.map_err(|_| "a uint64 value does not fit in 63 bits".to_string())?)
        }
        _ => Values::Other,
    };
    Ok(Array {
        dtype: dtype_name(&code),
        shape,
        values,
    })
}

/// NumPy's name for a dtype descriptor such as `<f8` (`float64`), with `big-endian` before
/// a big-endian one; the descriptor itself for a dtype without a short name.
pub fn dtype_name(code: &str) -> String {
    let name = static_name(code.trim_start_matches(['<', '>', '|', '=']));
    match (name, code.starts_with('>')) {
        ("", _) => format!("dtype `{code}`"),
        (name, true) => format!("big-endian {name}"),
        (name, false) => name.to_string(),
    }
}

fn static_name(kind: &str) -> &'static str {
    match kind {
        "f2" => "float16",
        "f4" => "float32",
        "f8" => "float64",
        "i1" => "int8",
        "i2" => "int16",
        "i4" => "int32",
        "i8" => "int64",
        "u1" => "uint8",
        "u2" => "uint16",
        "u4" => "uint32",
        "u8" => "uint64",
        "b1" => "bool",
        _ => "",
    }
}

/// The deepest nesting of `{`, `[` and `(` accepted in a `.npy` header. NumPy writes one
/// dict with a shape tuple (structured dtypes nest a few levels more); npyz's header parser
/// takes time exponential in the nesting (found by fuzzing: 12 levels 7.5 s, 14 levels a
/// minute), so deeper headers are refused before it sees them.
const MAX_HEADER_NESTING: usize = 6;

/// The longest `.npy` header accepted, in bytes (NumPy writes under a hundred or so).
const MAX_HEADER_BYTES: usize = 1 << 16;

/// A `.npy` stream whose start (magic, version, header) was read ahead to be checked.
type Checked<R> = npyz::NpyFile<Chain<Cursor<Vec<u8>>, R>>;

/// Opens a `.npy` stream, after checking that its header is one npyz parses quickly.
fn open<R: Read>(mut reader: R) -> Result<Checked<R>, String> {
    let start = checked_start(&mut reader)?;
    npyz::NpyFile::new(Cursor::new(start).chain(reader))
        .map_err(|e| format!("not a NumPy .npy file ({e})"))
}

/// Reads the magic, version and header of a `.npy` stream and checks the header's size and
/// nesting (see [`MAX_HEADER_NESTING`]); returns the bytes read, for npyz to read again.
fn checked_start(reader: &mut impl Read) -> Result<Vec<u8>, String> {
    let malformed = |why: &str| format!("not a NumPy .npy file ({why})");
    let mut start = vec![0u8; 8];
    if reader.read_exact(&mut start).is_err() || &start[..6] != b"\x93NUMPY" {
        return Err(malformed("it does not start with the .npy magic string"));
    }
    let width = if start[6] == 1 { 2 } else { 4 };
    let mut len_bytes = [0u8; 4];
    reader
        .read_exact(&mut len_bytes[..width])
        .map_err(|e| malformed(&e.to_string()))?;
    start.extend_from_slice(&len_bytes[..width]);
    let len = u32::from_le_bytes(len_bytes) as usize;
    if len > MAX_HEADER_BYTES {
        return Err(malformed(&format!("its header claims {len} bytes")));
    }
    let mut header = vec![0u8; len];
    reader
        .read_exact(&mut header)
        .map_err(|e| malformed(&e.to_string()))?;
    let mut depth = 0usize;
    for b in &header {
        match b {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_HEADER_NESTING {
            return Err(malformed(&format!(
                "its header nests brackets more than {MAX_HEADER_NESTING} deep"
            )));
        }
    }
    start.extend_from_slice(&header);
    Ok(start)
}

fn values<T: npyz::Deserialize, R: Read>(npy: npyz::NpyFile<R>) -> Result<Vec<T>, String> {
    npy.into_vec::<T>().map_err(|e| e.to_string())
}

/// The values of a little-endian float32 array (what NumPy writes on every common machine),
/// read in blocks rather than value by value as npyz reads them: for the weights of
/// examples/mlp_streaming that was 55 million instructions, 1.5% of its whole run
/// (BENCHMARKS.md, "mlp_streaming's last 11%"). A short file fails as npyz's read does.
fn f32_le<R: Read>(npy: Checked<R>) -> Result<Vec<f32>, String> {
    /// Read at most this much ahead of what the file has given, whatever its header claims.
    const BLOCK: u64 = 1 << 20;
    let mut left = npy.len().saturating_mul(4);
    let mut reader = npy.into_inner();
    let mut bytes = Vec::new();
    while left > 0 {
        let start = bytes.len();
        let block = left.min(BLOCK);
        bytes.resize(start + block as usize, 0);
        reader
            .read_exact(&mut bytes[start..])
            .map_err(|e| e.to_string())?;
        left -= block;
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

fn ints<T: npyz::Deserialize + Into<i64>>(npy: npyz::NpyFile<impl Read>) -> Result<Values, String> {
    Ok(Values::Int(
        values::<T, _>(npy)?.into_iter().map(Into::into).collect(),
    ))
}

/// The dtype's type code such as `<f4` (npyz gives it as a Python literal, `'<f4'`).
fn type_code(dtype: &npyz::DType) -> String {
    dtype.descr().trim_matches('\'').to_string()
}
