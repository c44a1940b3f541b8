//! A process whose environment says a PMIx launcher started it (`PMIX_NAMESPACE`,
//! `PMIX_RANK`) takes the PMIx path: it must not fall back to a singleton world (which would
//! make every rank of the job rank 0 of 1). Its own test binary: it sets the environment.

use weft_pmi::PmiClient;

#[test]
fn pmix_environment_is_not_a_singleton() {
    for var in [
        "PMI_FD",
        "PMI_PORT",
        "PMI_ID",
        "PMI_RANK",
        "PMI_SIZE",
        "PMI_JOBID",
    ] {
        std::env::remove_var(var);
    }
    std::env::set_var("PMIX_NAMESPACE", "weft-test-no-such-server");
    std::env::set_var("PMIX_RANK", "0");
    for (var, _) in std::env::vars().filter(|(k, _)| k.starts_with("PMIX_SERVER_URI")) {
        std::env::remove_var(var);
    }
    let err = PmiClient::from_env(None).expect_err("no PMIx server runs: PMIx_Init must fail");
    let text = err.to_string();
    match weft_pmi::pmix_library_version() {
        // OpenPMIx is installed: it was asked, and found no server.
        Some(_) => assert!(text.contains("PMIx_Init"), "{text}"),
        // Not installed: the message says what to install.
        None => assert!(text.contains("libpmix.so.2"), "{text}"),
    }
}
