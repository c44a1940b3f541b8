use super::*;
use crate::testkit::serve;
use crate::{decode_psets, encode_psets, Event, Pset, Server, PSETS_KEY};
use std::io::{Read, Write};
use std::thread;

/// Runs `body` as every rank of a `size`-rank job served over socket pairs.
fn job<T: Send + 'static>(
    server: Server,
    version: u8,
    body: impl Fn(PmiClient) -> T + Send + Sync + Copy + 'static,
) -> (Vec<T>, crate::testkit::Outcome) {
    let size = server.size();
    let (streams, handle) = serve(server);
    let ranks: Vec<_> = streams
        .into_iter()
        .enumerate()
        .map(|(rank, stream)| {
            thread::spawn(move || {
                body(PmiClient::over_stream(stream, version, rank as u32, size).unwrap())
            })
        })
        .collect();
    let results = ranks.into_iter().map(|t| t.join().unwrap()).collect();
    (results, handle.join().unwrap())
}

fn exchange(mut c: PmiClient) -> Vec<String> {
    let me = c.rank();
    c.put("addr", &format!("rank{me}-addr")).unwrap();
    c.fence().unwrap();
    let mut seen = Vec::new();
    for peer in 0..c.size() {
        seen.push(c.get(peer, "addr").unwrap().unwrap());
    }
    assert_eq!(c.get(0, "missing").unwrap(), None);
    assert_eq!(
        c.get_job_attr("PMI_process_mapping").unwrap().as_deref(),
        Some("(vector,(0,1,3))")
    );
    assert_eq!(c.get_job_attr("no_such_attr").unwrap(), None);
    assert_eq!(c.node_of_ranks().unwrap(), vec![0, 0, 0]);
    assert_eq!(c.kvs_name(), "kvs_test");
    assert_eq!(c.universe_size().unwrap(), Some(3));
    assert_eq!(c.appnum().unwrap(), i32::from(me == 2));
    c.finalize().unwrap();
    assert!(matches!(c.put("k", "v"), Err(PmiError::Finalized { .. })));
    assert!(matches!(c.finalize(), Err(PmiError::Finalized { .. })));
    seen
}

fn exchange_server() -> Server {
    let mut server = Server::new("kvs_test", 3);
    server.set_appnum(2, 1);
    server
}

#[test]
fn three_ranks_exchange_over_pmi1() {
    let (results, outcome) = job(exchange_server(), 1, |c| {
        assert_eq!(c.mode(), Mode::Pmi1);
        exchange(c)
    });
    for seen in results {
        assert_eq!(seen, ["rank0-addr", "rank1-addr", "rank2-addr"]);
    }
    assert!(outcome.events.is_empty(), "{:?}", outcome.events);
    let server = outcome.server.unwrap();
    assert!((0..3).all(|r| server.state(r) == crate::PeerState::Finalized));
}

#[test]
fn three_ranks_exchange_over_pmi2() {
    let (results, outcome) = job(exchange_server(), 2, |c| {
        assert_eq!(c.mode(), Mode::Pmi2);
        exchange(c)
    });
    for seen in results {
        assert_eq!(seen, ["rank0-addr", "rank1-addr", "rank2-addr"]);
    }
    assert!(outcome.events.is_empty(), "{:?}", outcome.events);
}

#[test]
fn abort_reaches_the_server() {
    for version in [1, 2] {
        let (_, outcome) = job(Server::new("kvs", 1), version, |mut c| {
            c.abort(7, "bad thing; happened\n")
        });
        assert_eq!(
            outcome.events,
            [Event::Abort {
                rank: 0,
                exit_code: 7,
                message: "bad_thing__happened_".into()
            }]
        );
    }
}

#[test]
fn process_sets_travel_as_a_job_attribute() {
    let sets = vec![Pset::parse("app://even=0,2", 3).unwrap()];
    for version in [1, 2] {
        let mut server = Server::new("kvs", 1);
        server.set_job_attr(PSETS_KEY, &encode_psets(&sets));
        let (got, _) = job(server, version, |mut c| {
            let value = c.get_job_attr(PSETS_KEY).unwrap().unwrap();
            c.finalize().unwrap();
            decode_psets(&value).unwrap()
        });
        assert_eq!(got[0], sets);
    }
}

#[test]
fn unusable_keys_and_values_are_refused() {
    job(Server::new("kvs", 1), 1, |mut c| {
        for (key, value) in [
            ("k", ""),
            ("k", "a b"),
            ("k", "a;b"),
            ("k", "a\nb"),
            ("", "v"),
            ("a=b", "v"),
            ("k k", "v"),
        ] {
            assert!(
                matches!(c.put(key, value), Err(PmiError::InvalidArgument { .. })),
                "{key:?} {value:?}"
            );
        }
        assert!(c.put(&"k".repeat(70), "v").is_err());
        assert!(c.put("k", &"v".repeat(1025)).is_err());
        assert!(c.put("k", &"v".repeat(1024)).is_ok());
        assert!(matches!(
            c.get(1, "k"),
            Err(PmiError::InvalidArgument { .. })
        ));
        c.finalize().unwrap();
    });
}

#[test]
fn singleton_keeps_a_local_store() {
    let mut c = PmiClient::singleton();
    assert_eq!((c.mode(), c.rank(), c.size()), (Mode::Singleton, 0, 1));
    assert!(c
        .kvs_name()
        .starts_with(&format!("singleton-{}-", std::process::id())));
    c.put("a", "1").unwrap();
    c.fence().unwrap();
    assert_eq!(c.get(0, "a").unwrap().as_deref(), Some("1"));
    assert_eq!(c.get(0, "b").unwrap(), None);
    assert_eq!(c.get_job_attr("PMI_process_mapping").unwrap(), None);
    assert_eq!(c.node_of_ranks().unwrap(), vec![0]);
    c.abort(1, "nothing happens");
    c.finalize().unwrap();
    assert!(c.get(0, "a").is_err());
}

#[test]
fn a_server_that_hangs_up_or_talks_nonsense_gives_errors() {
    let (client, server) = UnixStream::pair().unwrap();
    drop(server);
    let err = PmiClient::over_stream(client, 1, 0, 1).unwrap_err();
    assert!(
        matches!(err, PmiError::Closed { .. }) || matches!(err, PmiError::Io { .. }),
        "{err}"
    );

    for answer in [
        &b"garbage\n"[..],
        b"cmd=maxes rc=0\n",
        b"cmd=response_to_init rc=5 msg=no\n",
    ] {
        let (client, mut server) = UnixStream::pair().unwrap();
        let answer = answer.to_vec();
        let fake = thread::spawn(move || {
            let mut buf = [0u8; 256];
            let _ = server.read(&mut buf);
            server.write_all(&answer).unwrap();
        });
        let err = PmiClient::over_stream(client, 1, 0, 1).unwrap_err();
        assert!(err.to_string().starts_with("PMI init: "), "{err}");
        fake.join().unwrap();
    }
    let (client, _server) = UnixStream::pair().unwrap();
    assert!(PmiClient::over_stream(client, 3, 0, 1).is_err());
}
