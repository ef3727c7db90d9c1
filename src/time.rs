//! RFC 3339 timestamps for protobuf `Timestamp` values, in UTC.
//!
//! Only the Gregorian arithmetic is needed (Howard Hinnant's civil-from-days
//! and days-from-civil), so this is done by hand rather than with a date
//! crate. Formatting and parsing are inverses on everything [`format`]
//! writes, which the message-stream fixpoint relies on.

/// A protobuf `google.protobuf.Timestamp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    pub seconds: i64,
    pub nanos: i32,
}

/// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range RFC 3339 can
/// write with four-digit years. A damaged blob may hold anything, and a value
/// outside this range is treated as absent rather than printed as nonsense.
const MIN_SECONDS: i64 = -62_167_219_200;
const MAX_SECONDS: i64 = 253_402_300_799;

fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A day, counted from 1970-01-01 (day 0), as reports group by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(pub i64);

impl Day {
    /// The UTC day `time` falls on.
    pub fn of(time: Timestamp) -> Day {
        Day(time.seconds.div_euclid(86_400))
    }

    /// `YYYY-MM-DD` or `YYYYMMDD`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Day> {
        let digits: String = match text.len() {
            10 if text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-' => {
                text.chars().filter(|c| *c != '-').collect()
            }
            8 => text.to_string(),
            _ => return None,
        };
        if !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() != 8 {
            return None;
        }
        let year: i64 = digits[..4].parse().ok()?;
        let month: u32 = digits[4..6].parse().ok()?;
        let day: u32 = digits[6..].parse().ok()?;
        let at = Day(days_from_civil(year, month, day));
        // 2026-02-30 is no day: it does not come back as written.
        (at.ymd() == (year, month, day)).then_some(at)
    }

    pub fn ymd(self) -> (i64, u32, u32) {
        civil_from_days(self.0)
    }

    /// `YYYY-MM-DD`.
    pub fn format(self) -> String {
        let (year, month, day) = self.ymd();
        format!("{year:04}-{month:02}-{day:02}")
    }

    /// `YYYY-MM`.
    pub fn month(self) -> String {
        let (year, month, _) = self.ymd();
        format!("{year:04}-{month:02}")
    }

    /// The Sunday that starts its week (as ccusage's weeks start).
    pub fn week_start(self) -> Day {
        // 1970-01-01 was a Thursday: day 0 is 4 days after a Sunday.
        Day(self.0 - (self.0 + 4).rem_euclid(7))
    }
}

/// `value` as exactly `width` decimal digits, zero-padded (`value` has no
/// more).
fn push_digits(out: &mut String, value: u32, width: u32) {
    let mut divisor = 10u32.pow(width - 1);
    while divisor > 0 {
        out.push(char::from(b'0' + (value / divisor % 10) as u8));
        divisor /= 10;
    }
}

impl Timestamp {
    /// Whether RFC 3339 can write this value.
    pub fn is_writable(&self) -> bool {
        (MIN_SECONDS..=MAX_SECONDS).contains(&self.seconds)
            && (0..1_000_000_000).contains(&self.nanos)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff|.ffffff|.fffffffff]Z`: the fraction only
    /// when non-zero, in the shortest group of three digits that holds it,
    /// so millisecond timestamps from other tools come back as they went in.
    /// `None` when the value is out of range.
    pub fn format(&self) -> Option<String> {
        let mut out = String::with_capacity(30);
        self.write_seconds(&mut out)?;
        if self.nanos != 0 {
            let nanos = self.nanos as u32;
            out.push('.');
            if nanos.is_multiple_of(1_000_000) {
                push_digits(&mut out, nanos / 1_000_000, 3);
            } else if nanos.is_multiple_of(1_000) {
                push_digits(&mut out, nanos / 1_000, 6);
            } else {
                push_digits(&mut out, nanos, 9);
            }
        }
        out.push('Z');
        Some(out)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, the brain transcript's second precision.
    pub fn format_seconds(&self) -> Option<String> {
        let mut out = String::with_capacity(20);
        self.write_seconds(&mut out)?;
        out.push('Z');
        Some(out)
    }

    /// `YYYY-MM-DDTHH:MM:SS` onto `out`, digit by digit: a decoded
    /// conversation writes one per message, and `format!` made them a
    /// twentieth of agy-decode's instructions.
    fn write_seconds(&self, out: &mut String) -> Option<()> {
        if !self.is_writable() {
            return None;
        }
        let days = self.seconds.div_euclid(86_400);
        let secs = self.seconds.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        // In range, the year is 0 to 9999.
        push_digits(out, year as u32, 4);
        out.push('-');
        push_digits(out, month, 2);
        out.push('-');
        push_digits(out, day, 2);
        out.push('T');
        push_digits(out, secs / 3600, 2);
        out.push(':');
        push_digits(out, secs / 60 % 60, 2);
        out.push(':');
        push_digits(out, secs % 60, 2);
        Some(())
    }

    /// Milliseconds since the epoch, as JavaScript keeps time (OpenCode's
    /// sessions); the nanoseconds below a millisecond are cut.
    pub fn epoch_millis(&self) -> i64 {
        self.seconds
            .saturating_mul(1000)
            .saturating_add(i64::from(self.nanos / 1_000_000))
    }

    /// The inverse of [`Timestamp::epoch_millis`].
    pub fn from_epoch_millis(millis: i64) -> Timestamp {
        Timestamp {
            seconds: millis.div_euclid(1000),
            nanos: (millis.rem_euclid(1000) * 1_000_000) as i32,
        }
    }

    /// Parses RFC 3339 (`T` separator; `Z` or a `±HH:MM` offset; a fraction
    /// of one to nine digits). The error says what is wrong.
    pub fn parse(text: &str) -> Result<Timestamp, String> {
        let bad = |why: &str| format!("bad timestamp {text:?}: {why}");
        let b = text.as_bytes();
        if b.len() < 20 {
            return Err(bad("too short for YYYY-MM-DDTHH:MM:SSZ"));
        }
        let digits = |range: std::ops::Range<usize>| -> Result<i64, String> {
            let part = &b[range];
            if part.iter().all(u8::is_ascii_digit) {
                Ok(part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
            } else {
                Err(bad("expected digits"))
            }
        };
        if b[4] != b'-'
            || b[7] != b'-'
            || !matches!(b[10], b'T' | b't')
            || b[13] != b':'
            || b[16] != b':'
        {
            return Err(bad("expected YYYY-MM-DDTHH:MM:SS"));
        }
        let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
        let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
        if !(1..=12).contains(&month)
            || !(1..=31).contains(&day)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return Err(bad("field out of range"));
        }
        let mut rest = &b[19..];
        let mut nanos = 0i64;
        if let [b'.', tail @ ..] = rest {
            let n = tail.iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 || n > 9 {
                return Err(bad("fraction must have 1 to 9 digits"));
            }
            nanos = digits(20..20 + n)? * 10i64.pow(9 - n as u32);
            rest = &tail[n..];
        }
        let offset = match rest {
            [b'Z' | b'z'] => 0,
            [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
                let hm = [*h1, *h2, *m1, *m2];
                if !hm.iter().all(u8::is_ascii_digit) {
                    return Err(bad("bad UTC offset"));
                }
                let minutes = i64::from(hm[0] - b'0') * 600
                    + i64::from(hm[1] - b'0') * 60
                    + i64::from(hm[2] - b'0') * 10
                    + i64::from(hm[3] - b'0');
                if *sign == b'+' {
                    minutes * 60
                } else {
                    -minutes * 60
                }
            }
            _ => return Err(bad("expected Z or a ±HH:MM offset at the end")),
        };
        let days = days_from_civil(year, month as u32, day as u32);
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
        let ts = Timestamp {
            seconds,
            nanos: nanos as i32,
        };
        if !ts.is_writable() {
            return Err(bad("out of range"));
        }
        Ok(ts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(seconds: i64, nanos: i32) -> Timestamp {
        Timestamp { seconds, nanos }
    }

    #[test]
    fn known_values() {
        assert_eq!(ts(0, 0).format().unwrap(), "1970-01-01T00:00:00Z");
        assert_eq!(
            ts(1_786_353_243, 0).format().unwrap(),
            "2026-08-10T09:14:03Z"
        );
        assert_eq!(ts(951_782_400, 0).format().unwrap(), "2000-02-29T00:00:00Z");
        assert_eq!(ts(-1, 0).format().unwrap(), "1969-12-31T23:59:59Z");
        assert_eq!(ts(0, 5).format().unwrap(), "1970-01-01T00:00:00.000000005Z");
        assert_eq!(
            ts(0, 120_000_000).format().unwrap(),
            "1970-01-01T00:00:00.120Z"
        );
        assert_eq!(
            ts(0, 123_456_000).format().unwrap(),
            "1970-01-01T00:00:00.123456Z"
        );
        assert_eq!(ts(MIN_SECONDS, 0).format().unwrap(), "0000-01-01T00:00:00Z");
        assert_eq!(ts(MAX_SECONDS, 0).format().unwrap(), "9999-12-31T23:59:59Z");
        assert_eq!(ts(MAX_SECONDS + 1, 0).format(), None);
        assert_eq!(ts(0, -1).format(), None);
        assert_eq!(ts(0, 1_000_000_000).format(), None);
        assert_eq!(ts(5, 999).format_seconds().unwrap(), "1970-01-01T00:00:05Z");
    }

    #[test]
    fn epoch_millis_both_ways() {
        let t = Timestamp::parse("2026-12-01T23:22:46.927Z").unwrap();
        // What JavaScript's Date.parse gives for that time.
        assert_eq!(t.epoch_millis(), 1_796_167_366_927);
        assert_eq!(Timestamp::from_epoch_millis(1_796_167_366_927), t);
        assert_eq!(
            Timestamp::from_epoch_millis(-1).format().as_deref(),
            Some("1969-12-31T23:59:59.999Z")
        );
        assert_eq!(ts(5, 999_999).epoch_millis(), 5_000);
    }

    /// The `format!` spelling the digit writer replaced.
    fn formatted(t: Timestamp) -> String {
        let days = t.seconds.div_euclid(86_400);
        let secs = t.seconds.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        let mut out = format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        );
        let nanos = t.nanos as u32;
        if nanos != 0 {
            out.push_str(&match (nanos % 1_000_000, nanos % 1_000) {
                (0, _) => format!(".{:03}", nanos / 1_000_000),
                (_, 0) => format!(".{:06}", nanos / 1_000),
                _ => format!(".{nanos:09}"),
            });
        }
        out + "Z"
    }

    /// `n` timestamps from `seed`, anywhere in range, a quarter each with
    /// no fraction, milliseconds, microseconds and nanoseconds.
    fn random(seed: u64, n: usize) -> impl Iterator<Item = Timestamp> {
        let mut state = seed;
        (0..n).map(move |_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let seconds = MIN_SECONDS + (state >> 11) as i64 % (MAX_SECONDS - MIN_SECONDS + 1);
            let nanos = match state % 4 {
                0 => 0,
                1 => ((state >> 7) % 1000) as i32 * 1_000_000,
                2 => ((state >> 9) % 1_000_000) as i32 * 1000,
                _ => ((state >> 3) % 1_000_000_000) as i32,
            };
            ts(seconds, nanos)
        })
    }

    #[test]
    fn days_read_and_write_as_reports_show_them() {
        let day = Day::parse("2026-12-04").unwrap();
        assert_eq!(Day::parse("20261204"), Some(day));
        assert_eq!(day.format(), "2026-12-04");
        assert_eq!(day.month(), "2026-12");
        // 2026-12-04 is a Friday; its week began on Sunday the 29th.
        assert_eq!(day.week_start().format(), "2026-11-29");
        assert_eq!(
            Day::parse("2026-11-29").unwrap().week_start().format(),
            "2026-11-29"
        );
        assert_eq!(Day::of(ts(0, 0)).format(), "1970-01-01");
        assert_eq!(Day::of(ts(-1, 0)).format(), "1969-12-31");
        for bad in [
            "2026-02-30",
            "2026-13-01",
            "2026/12/04",
            "1204",
            "2026-12-4",
        ] {
            assert_eq!(Day::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn digits_are_written_as_format_would() {
        for t in random(11, 20_000) {
            assert_eq!(t.format().unwrap(), formatted(t));
            assert_eq!(t.format_seconds().unwrap(), formatted(ts(t.seconds, 0)));
        }
    }

    #[test]
    fn parse_inverts_format() {
        for t in random(7, 2000) {
            let text = t.format().unwrap();
            assert_eq!(Timestamp::parse(&text), Ok(t), "{text}");
        }
    }

    #[test]
    fn parse_offsets_and_errors() {
        assert_eq!(
            Timestamp::parse("2026-08-10T11:14:03+02:00"),
            Ok(ts(1_786_353_243, 0))
        );
        assert_eq!(
            Timestamp::parse("2026-08-10T09:14:03.5Z"),
            Ok(ts(1_786_353_243, 500_000_000))
        );
        for bad in [
            "2026-08-10",
            "2026-08-10 09:14:03Z",
            "2026-13-10T09:14:03Z",
            "2026-08-10T09:14:03",
            "2026-08-10T09:14:03.Z",
            "x026-08-10T09:14:03Z",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
    }
}
