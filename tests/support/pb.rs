//! A minimal protobuf encoder for fixtures: `Msg::new().varint(1, 14).str(2, "hi")`.

#[derive(Clone, Debug, Default)]
pub struct Msg(pub Vec<u8>);

fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

impl Msg {
    pub fn new() -> Msg {
        Msg(Vec::new())
    }

    pub fn varint(mut self, field: u32, v: u64) -> Msg {
        varint(&mut self.0, u64::from(field) << 3);
        varint(&mut self.0, v);
        self
    }

    pub fn int(self, field: u32, v: i64) -> Msg {
        self.varint(field, v as u64)
    }

    pub fn bytes(mut self, field: u32, v: &[u8]) -> Msg {
        varint(&mut self.0, (u64::from(field) << 3) | 2);
        varint(&mut self.0, v.len() as u64);
        self.0.extend_from_slice(v);
        self
    }

    pub fn str(self, field: u32, v: &str) -> Msg {
        self.bytes(field, v.as_bytes())
    }

    pub fn msg(self, field: u32, m: Msg) -> Msg {
        self.bytes(field, &m.0)
    }

    /// A google.protobuf.Timestamp.
    pub fn ts(self, field: u32, seconds: i64, nanos: i32) -> Msg {
        let mut t = Msg::new().int(1, seconds);
        if nanos != 0 {
            t = t.int(2, i64::from(nanos));
        }
        self.msg(field, t)
    }

    pub fn build(self) -> Vec<u8> {
        self.0
    }
}
