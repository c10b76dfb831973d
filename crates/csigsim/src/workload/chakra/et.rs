//! The messages of a Chakra execution trace, as MLCommons publishes them
//! (schema `et_def.proto`, package `ChakraProtoMsg`), written as prost
//! derives: each field names its number in the schema. A trace file is a
//! `GlobalMetadata` message, then `Node` messages, each preceded by its
//! length as a varint.

/// What a trace says about itself; csigsim reads none of it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GlobalMetadata {
    #[prost(string, tag = "1")]
    pub version: String,
    #[prost(message, repeated, tag = "2")]
    pub attr: Vec<AttributeProto>,
}

/// One operation of a rank.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Node {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(string, tag = "2")]
    pub name: String,
    /// A [`NodeType`] value.
    #[prost(int32, tag = "3")]
    pub r#type: i32,
    #[prost(uint64, repeated, tag = "4")]
    pub ctrl_deps: Vec<u64>,
    #[prost(uint64, repeated, tag = "5")]
    pub data_deps: Vec<u64>,
    #[prost(uint64, tag = "6")]
    pub start_time_micros: u64,
    #[prost(uint64, tag = "7")]
    pub duration_micros: u64,
    #[prost(message, optional, tag = "8")]
    pub inputs: Option<IoInfo>,
    #[prost(message, optional, tag = "9")]
    pub outputs: Option<IoInfo>,
    #[prost(message, repeated, tag = "10")]
    pub attr: Vec<AttributeProto>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct IoInfo {
    #[prost(string, tag = "1")]
    pub values: String,
    #[prost(string, tag = "2")]
    pub shapes: String,
    #[prost(string, tag = "3")]
    pub types: String,
}

/// The schema's `NodeType` values.
pub mod node_type {
    pub const INVALID: i32 = 0;
    pub const METADATA: i32 = 1;
    pub const MEM_LOAD: i32 = 2;
    pub const MEM_STORE: i32 = 3;
    pub const COMP: i32 = 4;
    pub const COMM_SEND: i32 = 5;
    pub const COMM_RECV: i32 = 6;
    pub const COMM_COLL: i32 = 7;

    /// The schema's name of a node type.
    pub fn name(t: i32) -> Option<&'static str> {
        Some(match t {
            INVALID => "INVALID_NODE",
            METADATA => "METADATA_NODE",
            MEM_LOAD => "MEM_LOAD_NODE",
            MEM_STORE => "MEM_STORE_NODE",
            COMP => "COMP_NODE",
            COMM_SEND => "COMM_SEND_NODE",
            COMM_RECV => "COMM_RECV_NODE",
            COMM_COLL => "COMM_COLL_NODE",
            _ => return None,
        })
    }
}

/// The schema's `CollectiveCommType` values.
pub mod comm_type {
    pub const ALL_REDUCE: i64 = 0;
    pub const REDUCE: i64 = 1;
    pub const ALL_GATHER: i64 = 2;
    pub const GATHER: i64 = 3;
    pub const SCATTER: i64 = 4;
    pub const BROADCAST: i64 = 5;
    pub const ALL_TO_ALL: i64 = 6;
    pub const REDUCE_SCATTER: i64 = 7;
    pub const REDUCE_SCATTER_BLOCK: i64 = 8;
    pub const BARRIER: i64 = 9;

    pub fn name(t: i64) -> Option<&'static str> {
        Some(match t {
            ALL_REDUCE => "ALL_REDUCE",
            REDUCE => "REDUCE",
            ALL_GATHER => "ALL_GATHER",
            GATHER => "GATHER",
            SCATTER => "SCATTER",
            BROADCAST => "BROADCAST",
            ALL_TO_ALL => "ALL_TO_ALL",
            REDUCE_SCATTER => "REDUCE_SCATTER",
            REDUCE_SCATTER_BLOCK => "REDUCE_SCATTER_BLOCK",
            BARRIER => "BARRIER",
            _ => return None,
        })
    }
}

/// A named value of one of the schema's types.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub doc_string: String,
    #[prost(oneof = "Value", tags = "3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32")]
    pub value: Option<Value>,
}

macro_rules! lists {
    ($($name:ident: $kind:ident => $t:ty),* $(,)?) => {
        $(
            #[derive(Clone, PartialEq, prost::Message)]
            pub struct $name {
                #[prost($kind, repeated, tag = "1")]
                pub values: Vec<$t>,
            }
        )*
    };
}

lists! {
    DoubleList: double => f64,
    FloatList: float => f32,
    Int32List: int32 => i32,
    Int64List: int64 => i64,
    Uint32List: uint32 => u32,
    Uint64List: uint64 => u64,
    Sint32List: sint32 => i32,
    Sint64List: sint64 => i64,
    Fixed32List: fixed32 => u32,
    Fixed64List: fixed64 => u64,
    Sfixed32List: sfixed32 => i32,
    Sfixed64List: sfixed64 => i64,
    BoolList: bool => bool,
    StringList: string => String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BytesList {
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub values: Vec<Vec<u8>>,
}

/// The `value` one-of of an attribute, field by field.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    #[prost(double, tag = "3")]
    DoubleVal(f64),
    #[prost(message, tag = "4")]
    DoubleList(DoubleList),
    #[prost(float, tag = "5")]
    FloatVal(f32),
    #[prost(message, tag = "6")]
    FloatList(FloatList),
    #[prost(int32, tag = "7")]
    Int32Val(i32),
    #[prost(message, tag = "8")]
    Int32List(Int32List),
    #[prost(int64, tag = "9")]
    Int64Val(i64),
    #[prost(message, tag = "10")]
    Int64List(Int64List),
    #[prost(uint32, tag = "11")]
    Uint32Val(u32),
    #[prost(message, tag = "12")]
    Uint32List(Uint32List),
    #[prost(uint64, tag = "13")]
    Uint64Val(u64),
    #[prost(message, tag = "14")]
    Uint64List(Uint64List),
    #[prost(sint32, tag = "15")]
    Sint32Val(i32),
    #[prost(message, tag = "16")]
    Sint32List(Sint32List),
    #[prost(sint64, tag = "17")]
    Sint64Val(i64),
    #[prost(message, tag = "18")]
    Sint64List(Sint64List),
    #[prost(fixed32, tag = "19")]
    Fixed32Val(u32),
    #[prost(message, tag = "20")]
    Fixed32List(Fixed32List),
    #[prost(fixed64, tag = "21")]
    Fixed64Val(u64),
    #[prost(message, tag = "22")]
    Fixed64List(Fixed64List),
    #[prost(sfixed32, tag = "23")]
    Sfixed32Val(i32),
    #[prost(message, tag = "24")]
    Sfixed32List(Sfixed32List),
    #[prost(sfixed64, tag = "25")]
    Sfixed64Val(i64),
    #[prost(message, tag = "26")]
    Sfixed64List(Sfixed64List),
    #[prost(bool, tag = "27")]
    BoolVal(bool),
    #[prost(message, tag = "28")]
    BoolList(BoolList),
    #[prost(string, tag = "29")]
    StringVal(String),
    #[prost(message, tag = "30")]
    StringList(StringList),
    #[prost(bytes = "vec", tag = "31")]
    BytesVal(Vec<u8>),
    #[prost(message, tag = "32")]
    BytesList(BytesList),
}

impl Value {
    /// The value as an integer, whichever integer type carries it (traces
    /// write `comm_size` as int64 or uint64).
    pub fn integer(&self) -> Option<i128> {
        Some(match *self {
            Value::Int32Val(v) | Value::Sint32Val(v) | Value::Sfixed32Val(v) => v as i128,
            Value::Int64Val(v) | Value::Sint64Val(v) | Value::Sfixed64Val(v) => v as i128,
            Value::Uint32Val(v) | Value::Fixed32Val(v) => v as i128,
            Value::Uint64Val(v) | Value::Fixed64Val(v) => v as i128,
            _ => return None,
        })
    }

    /// The schema's name of the value's type, for errors.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::DoubleVal(_) => "double",
            Value::FloatVal(_) => "float",
            Value::Int32Val(_) => "int32",
            Value::Int64Val(_) => "int64",
            Value::Uint32Val(_) => "uint32",
            Value::Uint64Val(_) => "uint64",
            Value::Sint32Val(_) => "sint32",
            Value::Sint64Val(_) => "sint64",
            Value::Fixed32Val(_) => "fixed32",
            Value::Fixed64Val(_) => "fixed64",
            Value::Sfixed32Val(_) => "sfixed32",
            Value::Sfixed64Val(_) => "sfixed64",
            Value::BoolVal(_) => "bool",
            Value::StringVal(_) => "string",
            Value::BytesVal(_) => "bytes",
            _ => "list",
        }
    }
}

/// Why a trace stream cannot be read, at a byte offset of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamError {
    pub offset: usize,
    pub message: String,
}

/// The messages of a trace stream (already decompressed): its metadata
/// and its nodes, in order.
pub fn decode_stream(bytes: &[u8]) -> Result<(GlobalMetadata, Vec<Node>), StreamError> {
    use prost::Message;
    let mut at = 0;
    let mut meta = None;
    let mut nodes = Vec::new();
    while at < bytes.len() {
        let start = at;
        let mut len: u64 = 0;
        let mut shift = 0;
        loop {
            let Some(&b) = bytes.get(at) else {
                return Err(StreamError { offset: start, message: "truncated: the stream ends inside a message's length".into() });
            };
            at += 1;
            if shift == 63 && b > 1 {
                return Err(StreamError { offset: start, message: "a message's length is not a valid varint (above 64 bits)".into() });
            }
            len |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        let left = (bytes.len() - at) as u64;
        if len > left {
            return Err(StreamError { offset: start, message: format!("truncated: the message here declares {len} bytes and the stream has {left} after its length") });
        }
        let body = &bytes[at..at + len as usize];
        at += len as usize;
        if meta.is_none() {
            let m = GlobalMetadata::decode(body).map_err(|e| StreamError { offset: start, message: format!("the first message is not a Chakra GlobalMetadata: {e}") })?;
            meta = Some(m);
        } else {
            let n = Node::decode(body).map_err(|e| StreamError { offset: start, message: format!("the message is not a Chakra Node: {e}") })?;
            nodes.push(n);
        }
    }
    let meta = meta.ok_or_else(|| StreamError { offset: 0, message: "the trace is empty: a Chakra trace begins with its GlobalMetadata message".into() })?;
    Ok((meta, nodes))
}

/// A trace stream of `meta` and `nodes` (each message preceded by its
/// length), as the Chakra tools write it.
pub fn encode_stream(meta: &GlobalMetadata, nodes: &[Node]) -> Vec<u8> {
    use prost::Message;
    let mut out = Vec::new();
    meta.encode_length_delimited(&mut out).expect("a vector grows");
    for n in nodes {
        n.encode_length_delimited(&mut out).expect("a vector grows");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(name: &str, v: Value) -> AttributeProto {
        AttributeProto { name: name.into(), doc_string: String::new(), value: Some(v) }
    }

    #[test]
    fn a_stream_reads_back_what_was_written_and_truncation_names_the_offset() {
        let meta = GlobalMetadata { version: "0.0.4".into(), attr: vec![attr("schema", Value::StringVal("x".into()))] };
        let nodes = vec![
            Node { id: 3, name: "c".into(), r#type: node_type::COMP, duration_micros: 7, ..Default::default() },
            Node { id: 4, r#type: node_type::COMM_COLL, data_deps: vec![3], attr: vec![attr("comm_size", Value::Uint64Val(1 << 40))], ..Default::default() },
        ];
        let bytes = encode_stream(&meta, &nodes);
        let (m, n) = decode_stream(&bytes).unwrap();
        assert_eq!((m, n.clone()), (meta.clone(), nodes.clone()));
        assert_eq!(n[1].attr[0].value.as_ref().unwrap().integer(), Some(1 << 40));
        // Cut inside the last message: the error is at that message's start.
        let last = encode_stream(&meta, &nodes[..1]).len();
        let e = decode_stream(&bytes[..bytes.len() - 1]).unwrap_err();
        assert_eq!(e.offset, last, "{e:?}");
        assert!(e.message.starts_with("truncated"), "{e:?}");
        assert!(decode_stream(&[]).unwrap_err().message.contains("empty"));
    }
}
