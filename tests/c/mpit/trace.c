/* WEFT_TRACE=path: the trace written at MPI_Finalize is one valid JSON document of
 * Chrome/Perfetto trace events (checked with Python's json module) holding each rank's
 * calls with their duration, communicator, bytes and peer, a thread of its own for each
 * thread that called MPI, and one process name per rank; the per-rank parts are gone. */
#include "wtest.h"
#include <pthread.h>
#include <unistd.h>

static void *worker(void *arg)
{
    (void)arg;
    int r;
    for (int i = 0; i < 3; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return NULL;
}

int main(int argc, char **argv)
{
    /* The ranks' parent is the launcher: one path per job. */
    char path[128];
    snprintf(path, sizeof path, "/tmp/weft-trace-test-%d.json", (int)getppid());
    setenv("WEFT_TRACE", path, 1);
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double buf[100] = {0};
    if (rank == 0) {
        MPI_Send(buf, 100, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
    } else {
        MPI_Recv(buf, 100, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
        pthread_join(t, NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "python3 - '%s' <<'EOF'\n"
                 "import json, os, sys\n"
                 "p = sys.argv[1]\n"
                 "d = json.load(open(p))\n"
                 "ev = d['traceEvents']\n"
                 "x = [e for e in ev if e['ph'] == 'X']\n"
                 "def one(name, pid):\n"
                 "    m = [e for e in x if e['name'] == name and e['pid'] == pid]\n"
                 "    assert len(m) == 1, (name, pid, m)\n"
                 "    return m[0]\n"
                 "s = one('MPI_Send', 0)\n"
                 "assert s['args'] == {'comm': '0x101', 'bytes': 800, 'peer': 1}, s\n"
                 "r = one('MPI_Recv', 1)\n"
                 "assert r['args']['bytes'] == 800 and r['args']['peer'] == 0, r\n"
                 "assert r['dur'] >= 0 and r['ts'] > 1.6e15, r\n"
                 "assert one('MPI_Barrier', 0) and one('MPI_Barrier', 1)\n"
                 "w = [e for e in x if e['name'] == 'MPI_Comm_rank' and e['pid'] == 1 and e['tid'] != r['tid']]\n"
                 "assert len(w) == 3 and len({e['tid'] for e in w}) == 1, w\n"
                 "names = sorted(e['args']['name'] for e in ev if e['ph'] == 'M')\n"
                 "assert names == ['rank 0', 'rank 1'], names\n"
                 "assert not os.path.exists(p + '.0') and not os.path.exists(p + '.1')\n"
                 "os.remove(p)\n"
                 "EOF\n",
                 path);
        int rc = system(cmd);
        CHECK_INT(rc, 0);
    }
    return wtest_finish();
}
