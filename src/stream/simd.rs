//! Which instruction set the vectored routines use: the JSON escaping and
//! scanning, hex both ways (`json`, `record`) and the renderer's escaping.
//!
//! Each routine has one plain (scalar) form and one form per instruction
//! set it is written for, and picks by the [`Level`] of [`level`]. The
//! level is what this CPU has (asked once; std keeps the answer), or lower
//! when the environment variable `AGY_SIMD` asks for it (`scalar`, `sse2`,
//! `ssse3`, `avx2`), so that one machine runs every path: `.ci/run` runs
//! the unit tests at each level, and the fuzz targets call each level's
//! form directly, as memchr tests each of its routines against one plain
//! reference.
//!
//! This is the one place that asks the CPU. Calling a routine compiled for
//! an instruction set the CPU lacks is undefined behaviour, so every
//! `unsafe` call of one rests on [`Level`] never being above what the CPU
//! has: [`level`] and [`Level::supported`] never are, whatever `AGY_SIMD`
//! says.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// An instruction set level, each including the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Plain Rust, a byte or a word at a time: every architecture.
    Scalar,
    /// The x86-64 baseline: every x86-64 CPU has it.
    Sse2,
    /// Byte shuffles (escaping once).
    Ssse3,
    /// 32-byte vectors (escaping once, the string-body scan, hex decoding).
    Avx2,
}

/// The instruction set features the levels need, as the CPU is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    Sse2,
    Ssse3,
    Avx2,
}

impl Level {
    /// Every level, lowest first.
    pub const ALL: [Level; 4] = [Level::Scalar, Level::Sse2, Level::Ssse3, Level::Avx2];

    /// The name `AGY_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Sse2 => "sse2",
            Level::Ssse3 => "ssse3",
            Level::Avx2 => "avx2",
        }
    }

    /// The level named `name` (as [`Level::name`] gives it).
    pub fn from_name(name: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The highest level a CPU with the features `has` says it has runs.
    /// Each level needs its own feature and every one below it.
    pub fn best_of(has: impl Fn(Feature) -> bool) -> Level {
        if !has(Feature::Sse2) {
            return Level::Scalar;
        }
        if !has(Feature::Ssse3) {
            return Level::Sse2;
        }
        if !has(Feature::Avx2) {
            return Level::Ssse3;
        }
        Level::Avx2
    }

    /// The highest level this CPU runs.
    pub fn best() -> Level {
        Level::best_of(cpu_has)
    }

    /// Whether this CPU runs this level's routines.
    pub fn supported(self) -> bool {
        self <= Level::best()
    }

    /// The levels this CPU runs, lowest first: what a test or fuzz target
    /// runs each routine at.
    pub fn supported_levels() -> impl Iterator<Item = Level> {
        Level::ALL.into_iter().filter(|l| l.supported())
    }

    /// The level to use when `AGY_SIMD` says `requested` on a CPU whose
    /// best is `best`: the lower of the two, since a routine the CPU cannot
    /// run must never be called. An error names what is wrong with the
    /// request.
    pub fn chosen(requested: Option<&str>, best: Level) -> Result<Level, String> {
        let Some(requested) = requested else {
            return Ok(best);
        };
        let Some(level) = Level::from_name(requested) else {
            return Err(format!(
                "AGY_SIMD={requested:?} is not one of scalar, sse2, ssse3, avx2; ignored"
            ));
        };
        if level > best {
            return Err(format!(
                "AGY_SIMD={requested:?}: this CPU runs at most {}; using that",
                best.name()
            ));
        }
        Ok(level)
    }
}

/// Whether this CPU has `feature`, as std detects it (for AVX2, that the
/// operating system saves its registers too).
#[cfg(target_arch = "x86_64")]
fn cpu_has(feature: Feature) -> bool {
    match feature {
        Feature::Sse2 => std::arch::is_x86_feature_detected!("sse2"),
        Feature::Ssse3 => std::arch::is_x86_feature_detected!("ssse3"),
        Feature::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
    }
}

/// No x86 routine is compiled elsewhere.
#[cfg(not(target_arch = "x86_64"))]
fn cpu_has(_feature: Feature) -> bool {
    false
}

/// The level every routine uses: [`Level::best`], or lower when
/// `AGY_SIMD` says so. Read once; a request it cannot follow is said on
/// stderr once, and the best level it may use is used.
///
/// Inlined down to one load: the writers ask for each string they escape,
/// and the call was 1.5 % of agy-encode.
#[inline]
pub fn level() -> Level {
    match LEVEL.load(Relaxed) {
        UNSET => choose_level(),
        cached => Level::ALL[usize::from(cached)],
    }
}

const UNSET: u8 = u8::MAX;
static LEVEL: AtomicU8 = AtomicU8::new(UNSET);

/// [`level`] the first time: reads `AGY_SIMD` and keeps the answer.
#[cold]
#[inline(never)]
fn choose_level() -> Level {
    let requested = std::env::var("AGY_SIMD").ok();
    let best = Level::best();
    let level = Level::chosen(requested.as_deref(), best).unwrap_or_else(|message| {
        eprintln!("agy-tools: {message}");
        match requested.as_deref().and_then(Level::from_name) {
            Some(asked) => asked.min(best),
            None => best,
        }
    });
    // Two threads may both get here; they compute the same level, and the
    // first one's message is the one the second repeats.
    LEVEL.store(level as u8, Relaxed);
    level
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CPU with the features `names` lists.
    fn cpu(names: &[Feature]) -> impl Fn(Feature) -> bool + '_ {
        move |f| names.contains(&f)
    }

    #[test]
    fn the_best_level_needs_every_feature_up_to_it() {
        use Feature::*;
        assert_eq!(Level::best_of(cpu(&[])), Level::Scalar);
        assert_eq!(Level::best_of(cpu(&[Sse2])), Level::Sse2);
        assert_eq!(Level::best_of(cpu(&[Sse2, Ssse3])), Level::Ssse3);
        assert_eq!(Level::best_of(cpu(&[Sse2, Ssse3, Avx2])), Level::Avx2);
        // A feature without the ones below it does not count.
        assert_eq!(Level::best_of(cpu(&[Sse2, Avx2])), Level::Sse2);
        assert_eq!(Level::best_of(cpu(&[Ssse3, Avx2])), Level::Scalar);
    }

    #[test]
    fn a_request_never_goes_above_the_cpu() {
        assert_eq!(Level::chosen(None, Level::Ssse3), Ok(Level::Ssse3));
        for best in Level::ALL {
            for asked in Level::ALL {
                let chosen = Level::chosen(Some(asked.name()), best);
                if asked <= best {
                    assert_eq!(chosen, Ok(asked));
                } else {
                    assert!(chosen.unwrap_err().contains("at most"));
                }
            }
        }
        assert!(Level::chosen(Some("neon"), Level::Avx2)
            .unwrap_err()
            .contains("not one of"));
    }

    /// The detection agrees with what the kernel says the CPU has, where
    /// it says (Linux on x86-64). AVX2 counts only where the kernel also
    /// lists `avx2`, since std asks the OS too.
    #[test]
    fn detection_agrees_with_proc_cpuinfo() {
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let Some(flags) = info.lines().find(|l| l.starts_with("flags")) else {
            return;
        };
        let flags: Vec<&str> = flags.split_whitespace().collect();
        let expected = Level::best_of(|f| {
            cfg!(target_arch = "x86_64")
                && flags.contains(&match f {
                    Feature::Sse2 => "sse2",
                    Feature::Ssse3 => "ssse3",
                    Feature::Avx2 => "avx2",
                })
        });
        assert_eq!(Level::best(), expected);
    }

    /// Under `AGY_SIMD` (as `.ci/run` sets it for each level), the level
    /// in force is the one asked for: a typo or a level this CPU lacks
    /// fails here instead of quietly testing the best level again.
    #[test]
    fn the_level_asked_for_is_in_force() {
        let Ok(asked) = std::env::var("AGY_SIMD") else {
            assert_eq!(level(), Level::best());
            return;
        };
        let asked =
            Level::from_name(&asked).unwrap_or_else(|| panic!("AGY_SIMD={asked:?} names no level"));
        assert!(asked.supported(), "this CPU cannot run {asked:?}");
        assert_eq!(level(), asked);
    }
}
