//! Command-line parsing.
//!
//! `mpiexec [options] PROGRAM [ARGS...] [: [options] PROGRAM [ARGS...]]...`
//! Options apply to the whole job, except `-n`, `-env` and `-wdir`, which belong to the program
//! (MPMD segment) they precede.
#![forbid(unsafe_code)]

use std::time::Duration;

/// Usage text for `-h`/`--help` and for mistakes.
pub const USAGE: &str = "\
Usage: mpiexec [options] [-n N] PROGRAM [ARGS...] [: [-n N] [-env NAME VALUE] [-wdir DIR] PROGRAM [ARGS...]]...

Runs N copies of PROGRAM on this machine as one MPI job (Weft's single-node launcher).

Options:
  -n, -np N               number of ranks of the next program (default 1)
  -env NAME VALUE         set NAME=VALUE for the ranks of the next program
  -genv NAME VALUE        set NAME=VALUE for every rank
  -wdir DIR               start the ranks of the next program in DIR
  -l, --tag-output        prefix each output line with \"[rank] \"
  --timeout SECONDS       end the job after SECONDS (exit 124); also WEFT_MPIEXEC_TIMEOUT
                          (or Hydra's MPIEXEC_TIMEOUT)
  --pset NAME=RANKLIST    define a process set, e.g. app://evens=0,2-3 (repeatable)
  -bind-to, --bind-to core|none
                          core: pin rank i to the i-th CPU mpiexec may use (for timing
                          runs on a machine no other job uses: concurrent jobs bound this
                          way share their first CPUs); none (default): the ranks run on
                          any of those CPUs, wherever the kernel places them
  -h, --help              show this help
  --version               show the version
";

/// CPU binding policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bind {
    /// Rank i runs on allowed CPU i mod the number of allowed CPUs.
    Core,
    /// No binding (the default: the launcher cannot know which CPUs other jobs use, so
    /// binding by default would pin rank i of every concurrent job to the same CPU).
    None,
}

/// One program of an MPMD launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// The number of ranks running it.
    pub ranks: u32,
    /// The program, found through `PATH` unless it contains a `/`.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for its ranks only.
    pub env: Vec<(String, String)>,
    /// The directory its ranks start in (`-wdir`; default: the launcher's).
    pub wdir: Option<String>,
}

/// A fully parsed job request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The programs, in rank order.
    pub programs: Vec<Program>,
    /// Variables set for every rank.
    pub genv: Vec<(String, String)>,
    /// Prefix output lines with the rank.
    pub tag_output: bool,
    /// End the job after this long.
    pub timeout: Option<Duration>,
    /// `--pset` specifications, unparsed (they need the job size).
    pub psets: Vec<String>,
    /// Binding policy.
    pub bind: Bind,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    /// Run a job.
    Run(Options),
    /// Print the usage text.
    Help,
    /// Print the version.
    Version,
}

impl Options {
    /// The total number of ranks.
    pub fn size(&self) -> u32 {
        self.programs.iter().map(|p| p.ranks).sum()
    }
}

/// Parses the arguments after the program name; `timeout_env` is `WEFT_MPIEXEC_TIMEOUT`.
pub fn parse(args: &[String], timeout_env: Option<&str>) -> Result<Request, String> {
    let mut opts = Options {
        programs: Vec::new(),
        genv: Vec::new(),
        tag_output: false,
        timeout: None,
        psets: Vec::new(),
        bind: Bind::None,
    };
    // Some(..) once --timeout was given, even as 0 (which then overrides the environment).
    let mut timeout_option: Option<Option<Duration>> = None;
    for segment in args.split(|a| a == ":") {
        let mut program = Program {
            ranks: 1,
            ..Program::default()
        };
        let mut it = segment.iter();
        while let Some(arg) = it.next() {
            if !arg.starts_with('-') || arg == "-" {
                program.command = arg.clone();
                program.args = it.by_ref().cloned().collect();
                break;
            }
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
                _ => (arg.as_str(), None),
            };
            let mut value = |what: &str| {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or_else(|| format!("{name} needs {what}"))
            };
            match name {
                "-h" | "-help" | "--help" => return Ok(Request::Help),
                "--version" | "-version" => return Ok(Request::Version),
                "-n" | "-np" | "--n" | "--np" => {
                    let text = value("a number of ranks")?;
                    program.ranks = text
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| format!("{name}: {text:?} is not a positive number"))?;
                }
                "-env" | "--env" | "-genv" | "--genv" => {
                    let var = value("NAME VALUE")?;
                    let val = it
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("{name} needs NAME VALUE"))?;
                    if var.is_empty() || var.contains('=') {
                        return Err(format!("{name}: {var:?} is not a variable name"));
                    }
                    if name.ends_with("genv") {
                        opts.genv.push((var, val));
                    } else {
                        program.env.push((var, val));
                    }
                }
                "-wdir" | "--wdir" => program.wdir = Some(value("a directory")?),
                "-l" | "--tag-output" | "-tag-output" => opts.tag_output = true,
                "--timeout" | "-timeout" => {
                    timeout_option = Some(parse_timeout(&value("SECONDS")?)?)
                }
                "--pset" | "-pset" => opts.psets.push(value("NAME=RANKLIST")?),
                "-bind-to" | "--bind-to" => {
                    opts.bind = match value("core or none")?.as_str() {
                        "core" => Bind::Core,
                        "none" => Bind::None,
                        other => return Err(format!("{name}: {other:?} is not core or none")),
                    }
                }
                _ => return Err(format!("unknown option {arg}")),
            }
        }
        if program.command.is_empty() {
            return Err("no program given".to_string());
        }
        opts.programs.push(program);
    }
    opts.timeout = match (timeout_option, timeout_env.filter(|t| !t.trim().is_empty())) {
        (Some(given), _) => given,
        (None, Some(text)) => {
            parse_timeout(text).map_err(|e| format!("WEFT_MPIEXEC_TIMEOUT/MPIEXEC_TIMEOUT: {e}"))?
        }
        (None, None) => None,
    };
    Ok(Request::Run(opts))
}

/// Parses a timeout in whole seconds; 0 means none.
fn parse_timeout(text: &str) -> Result<Option<Duration>, String> {
    let secs: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    Ok((secs > 0).then(|| Duration::from_secs(secs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> Result<Options, String> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        match parse(&args, None)? {
            Request::Run(o) => Ok(o),
            other => Err(format!("{other:?}")),
        }
    }

    #[test]
    fn single_program() {
        let o = run("-n 4 -l --timeout 5 -genv A 1 -bind-to none prog -n x").unwrap();
        assert_eq!(o.size(), 4);
        assert_eq!(o.programs[0].command, "prog");
        assert_eq!(o.programs[0].args, ["-n", "x"]);
        assert!(o.tag_output);
        assert_eq!(o.timeout, Some(Duration::from_secs(5)));
        assert_eq!(o.genv, [("A".into(), "1".into())]);
        assert_eq!(o.bind, Bind::None);
    }

    #[test]
    fn wdir_belongs_to_its_program() {
        let o = run("-n 1 -wdir /tmp a : -n 2 b : --wdir=/var c").unwrap();
        assert_eq!(o.programs[0].wdir.as_deref(), Some("/tmp"));
        assert_eq!(o.programs[1].wdir, None);
        assert_eq!(o.programs[2].wdir.as_deref(), Some("/var"));
        assert!(run("-wdir").is_err());
    }

    #[test]
    fn mpmd_segments_and_long_forms() {
        let o = run("-np 2 -env X 1 a : --n=3 --pset=p=0-4 --bind-to=core b arg").unwrap();
        assert_eq!(o.size(), 5);
        assert_eq!(o.programs[0].env, [("X".into(), "1".into())]);
        assert!(o.programs[1].env.is_empty());
        assert_eq!(o.programs[1].args, ["arg"]);
        assert_eq!(o.psets, ["p=0-4"]);
        assert_eq!(o.bind, Bind::Core);
        assert_eq!(run("prog").unwrap().size(), 1);
        assert_eq!(
            run("prog").unwrap().bind,
            Bind::None,
            "no binding by default"
        );
    }

    #[test]
    fn mistakes() {
        for bad in [
            "",
            "-n",
            "-n 0 p",
            "-n x p",
            "-q p",
            "--timeout soon p",
            "-bind-to socket p",
            "-env A",
            "p :",
            "-env A=B 1 p",
        ] {
            assert!(run(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse(&["--help".into()], None), Ok(Request::Help));
        assert_eq!(
            parse(&["--version".into(), "x".into()], None),
            Ok(Request::Version)
        );
    }

    #[test]
    fn timeout_from_the_environment() {
        let args = vec!["p".to_string()];
        let Ok(Request::Run(o)) = parse(&args, Some("3")) else {
            panic!()
        };
        assert_eq!(o.timeout, Some(Duration::from_secs(3)));
        let Ok(Request::Run(o)) = parse(&["--timeout".into(), "0".into(), "p".into()], Some("3"))
        else {
            panic!()
        };
        assert_eq!(o.timeout, None, "an explicit --timeout 0 wins");
        assert!(parse(&args, Some("x")).is_err());
    }
}
