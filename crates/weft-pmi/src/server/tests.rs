use super::*;

/// Feeds a PMI-1 line and returns the text of every answer.
fn v1(server: &mut Server, rank: u32, line: &str) -> Vec<String> {
    texts(server.receive(rank, format!("{line}\n").as_bytes()))
}

/// Feeds a PMI-2 body and returns the text of every answer.
fn v2(server: &mut Server, rank: u32, body: &str) -> Vec<String> {
    texts(server.receive(rank, format!("{:<6}{body}", body.len()).as_bytes()))
}

fn texts(events: Vec<Event>) -> Vec<String> {
    events
        .into_iter()
        .map(|e| match e {
            Event::Send { rank, bytes } => format!("{rank}:{}", String::from_utf8(bytes).unwrap()),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn pmi1_session() {
    let mut s = Server::new("kvs_7", 2);
    s.set_appnum(1, 3);
    assert_eq!(s.state(1), PeerState::Silent);
    assert_eq!(
        v1(&mut s, 1, "cmd=init pmi_version=1 pmi_subversion=1"),
        ["1:cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"]
    );
    assert_eq!(s.state(1), PeerState::Active);
    assert_eq!(
        v1(&mut s, 1, "cmd=get_maxes"),
        ["1:cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n"]
    );
    assert_eq!(
        v1(&mut s, 1, "cmd=get_appnum"),
        ["1:cmd=appnum rc=0 appnum=3\n"]
    );
    assert_eq!(
        v1(&mut s, 1, "cmd=get_universe_size"),
        ["1:cmd=universe_size rc=0 size=2\n"]
    );
    assert_eq!(
        v1(&mut s, 1, "cmd=get_my_kvsname"),
        ["1:cmd=my_kvsname rc=0 kvsname=kvs_7\n"]
    );
    assert_eq!(
        v1(&mut s, 1, "cmd=put kvsname=kvs_7 key=a value=1"),
        ["1:cmd=put_result rc=0\n"]
    );
    assert_eq!(
        v1(&mut s, 1, "cmd=get kvsname=kvs_7 key=a"),
        ["1:cmd=get_result rc=0 value=1\n"]
    );
    assert_eq!(
        v1(&mut s, 1, "cmd=get kvsname=kvs_7 key=b"),
        ["1:cmd=get_result rc=1 msg=key_not_found\n"]
    );
    assert_eq!(
        v1(&mut s, 1, "cmd=get kvsname=kvs_7 key=PMI_process_mapping"),
        ["1:cmd=get_result rc=0 value=(vector,(0,1,2))\n"]
    );
    assert_eq!(v1(&mut s, 1, "cmd=finalize"), ["1:cmd=finalize_ack rc=0\n"]);
    assert_eq!(s.state(1), PeerState::Finalized);
}

#[test]
fn pmi2_session() {
    let mut s = Server::new("kvs_9", 1);
    s.set_job_attr("weft_psets", "abcd");
    assert_eq!(
        v1(&mut s, 0, "cmd=init pmi_version=2 pmi_subversion=0"),
        ["0:cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"]
    );
    let full = v2(
        &mut s,
        0,
        "cmd=fullinit;pmijobid=x;pmirank=0;threaded=FALSE;",
    );
    assert!(full[0].contains("cmd=fullinit-response;"), "{full:?}");
    assert!(full[0].contains(";rank=0;size=1;appnum=0;"), "{full:?}");
    assert!(
        v2(&mut s, 0, "cmd=job-getid;")[0].ends_with("cmd=job-getid-response;jobid=kvs_9;rc=0;")
    );
    assert!(v2(&mut s, 0, "cmd=kvs-put;key=k;value=v;")[0].ends_with("cmd=kvs-put-response;rc=0;"));
    assert!(v2(&mut s, 0, "cmd=kvs-fence;")[0].ends_with("cmd=kvs-fence-response;rc=0;"));
    assert!(v2(&mut s, 0, "cmd=kvs-get;jobid=kvs_9;srcid=0;key=k;")[0]
        .ends_with("found=TRUE;value=v;rc=0;"));
    assert!(v2(&mut s, 0, "cmd=kvs-get;key=zz;")[0].ends_with("found=FALSE;rc=0;"));
    assert!(v2(&mut s, 0, "cmd=info-getjobattr;key=weft_psets;")[0]
        .ends_with("found=TRUE;value=abcd;rc=0;"));
    assert!(v2(&mut s, 0, "cmd=info-getjobattr;key=universeSize;")[0].ends_with("value=1;rc=0;"));
    assert!(v2(&mut s, 0, "cmd=kvs-put;key=k;")[0].contains("rc=-1;errmsg=missing_value="));
    assert!(v2(&mut s, 0, "cmd=finalize;")[0].ends_with("cmd=finalize-response;rc=0;"));
}

#[test]
fn barrier_waits_for_every_rank_across_versions() {
    let mut s = Server::new("kvs", 3);
    v1(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1");
    v1(&mut s, 1, "cmd=init pmi_version=2 pmi_subversion=0");
    v1(&mut s, 2, "cmd=init pmi_version=1 pmi_subversion=1");
    assert!(v1(&mut s, 0, "cmd=barrier_in").is_empty());
    assert!(v2(&mut s, 1, "cmd=kvs-fence;").is_empty());
    assert!(v1(&mut s, 0, "cmd=barrier_in")[0].contains("rc=-1"));
    let mut done = v1(&mut s, 2, "cmd=barrier_in");
    done.sort();
    assert_eq!(
        done,
        [
            "0:cmd=barrier_out rc=0\n",
            "1:28    cmd=kvs-fence-response;rc=0;",
            "2:cmd=barrier_out rc=0\n"
        ]
    );
    // A second round starts empty.
    assert!(v1(&mut s, 2, "cmd=barrier_in").is_empty());
}

#[test]
fn node_attributes_wait_for_their_put() {
    let mut s = Server::new("kvs", 2);
    v1(&mut s, 0, "cmd=init pmi_version=2 pmi_subversion=0");
    v1(&mut s, 1, "cmd=init pmi_version=2 pmi_subversion=0");
    assert!(v2(&mut s, 0, "cmd=info-getnodeattr;key=seg;")[0].contains("found=FALSE"));
    assert!(v2(&mut s, 0, "cmd=info-getnodeattr;key=seg;wait=TRUE;").is_empty());
    let mut put = v2(&mut s, 1, "cmd=info-putnodeattr;key=seg;value=42;");
    put.sort();
    assert!(
        put[0].starts_with("0:") && put[0].ends_with("found=TRUE;value=42;rc=0;"),
        "{put:?}"
    );
    assert!(put[1].ends_with("cmd=info-putnodeattr-response;rc=0;"));
}

#[test]
fn unknown_and_premature_commands_get_error_answers() {
    let mut s = Server::new("kvs", 1);
    assert_eq!(v1(&mut s, 0, "cmd=get_maxes")[0], "0:cmd=get_maxes_result rc=-1 msg=expected_cmd=init_pmi_version=1|2_first,_got_cmd=get_maxes\n");
    assert_eq!(s.state(0), PeerState::Silent);
    assert!(v1(&mut s, 0, "cmd=init pmi_version=3")[0].contains("rc=-1"));
    v1(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1");
    assert_eq!(
        v1(&mut s, 0, "cmd=spawn nprocs=2")[0],
        "0:cmd=spawn_result rc=-1 msg=unknown_command_spawn\n"
    );
    assert!(v1(&mut s, 0, "cmd=put value=1")[0].contains("msg=missing_key="));
    assert_eq!(s.state(0), PeerState::Active);
}

#[test]
fn abort_is_reported_and_stops_the_connection() {
    let mut s = Server::new("kvs", 1);
    v1(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1");
    let events = s.receive(0, b"cmd=abort exitcode=7 message=boom\ncmd=get_maxes\n");
    assert_eq!(
        events,
        [Event::Abort {
            rank: 0,
            exit_code: 7,
            message: "boom".into()
        }]
    );
    assert_eq!(s.state(0), PeerState::Aborted);
    assert!(s.receive(0, b"cmd=get_maxes\n").is_empty());
}

#[test]
fn a_weft_clients_abort_message_arrives_verbatim() {
    let text = "MPI_Send(count=-1): negative count; rank 3";
    for version in [1, 2] {
        let mut s = Server::new("kvs", 1);
        let line = format!(
            "cmd=abort exitcode=5 message=MPI_Send(count=-1):_negative_count__rank_3 {}={}\n",
            crate::ABORT_MESSAGE_HEX,
            crate::hex_encode(format!("{text}\n").as_bytes())
        );
        let events = if version == 1 {
            v1(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1");
            s.receive(0, line.as_bytes())
        } else {
            let body = line.trim_end().replace(' ', ";") + ";";
            let mut bytes = format!("{:<6}", body.len()).into_bytes();
            bytes.extend_from_slice(body.as_bytes());
            v1(&mut s, 0, "cmd=init pmi_version=2 pmi_subversion=0");
            s.receive(0, &bytes)
        };
        assert_eq!(
            events,
            [Event::Abort {
                rank: 0,
                exit_code: 5,
                message: text.into()
            }],
            "PMI-{version}"
        );
    }
}

#[test]
fn garbage_is_a_protocol_error_not_a_panic() {
    for garbage in [
        &b"\xff\xfe\n"[..],
        b"hello world\n",
        b"cmd=\n",
        &[b'x'; 70_000],
    ] {
        let mut s = Server::new("kvs", 1);
        let events = s.receive(0, garbage);
        assert!(
            matches!(events[..], [Event::ProtocolError { rank: 0, .. }]),
            "{events:?}"
        );
        assert_eq!(s.state(0), PeerState::Broken);
        assert!(s.receive(0, b"cmd=init pmi_version=1\n").is_empty());
    }
    let mut s = Server::new("kvs", 1);
    v1(&mut s, 0, "cmd=init pmi_version=2 pmi_subversion=0");
    let events = s.receive(0, b"xxxxxxcmd=a;");
    assert!(matches!(events[..], [Event::ProtocolError { .. }]));
}
