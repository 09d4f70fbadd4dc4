#!/usr/bin/env python3
"""A CRI v1 client: the few calls kubelet makes to start, watch and stop a
pod, for the netns test that runs the shipped manifests under containerd
(netns-tests/containerd.rs). Debian packages no crictl; this is its subset,
on PyPI's container-runtime-interface-api (the CRI v1 protos, generated)
and grpcio, installed by scripts/install-deps.sh in its venv.

Usage:
  cri.py --endpoint unix:///PATH/containerd.sock COMMAND ...
    version                      the runtime's name and versions (JSON)
    runp POD.json                RunPodSandbox; prints the sandbox id
    create POD_ID CTR.json POD.json
                                 CreateContainer; prints the container id
    start ID                     StartContainer
    inspect ID                   ContainerStatus, verbose (JSON: status, and
                                 info: the runtime's, e.g. pid, runtimeSpec)
    inspectp POD_ID              PodSandboxStatus, verbose (JSON)
    exec ID TIMEOUT_S -- ARGV... ExecSync; its stdout and stderr passed on,
                                 exits with its exit code
    stop ID TIMEOUT_S            StopContainer (SIGTERM, SIGKILL after it)
    rm ID                        RemoveContainer
    stopp POD_ID / rmp POD_ID    StopPodSandbox / RemovePodSandbox
  cri.py follow LOGFILE          the container's CRI log (kubelet's format:
                                 TIME STREAM TAG MESSAGE) as plain lines on
                                 stderr, following it until killed

POD.json and CTR.json are a PodSandboxConfig and a ContainerConfig in the
protobuf JSON mapping (crictl's files; scripts/oci-spec.py --cri writes
them from a manifest). An RPC error prints `cri: METHOD: CODE: DETAILS`
and exits 1. Run it with the venv's python: /var/cache/ribbridge/venv/bin/python.
"""

import json
import sys
import time

try:
    import grpc
    from google.protobuf import json_format
    from cri_api.v1 import api_pb2 as api
    from cri_api.v1.api_pb2_grpc import RuntimeServiceStub
except ImportError as e:
    sys.exit(f"cri: {e}: run it with /var/cache/ribbridge/venv/bin/python (scripts/install-deps.sh)")

# Every call but ExecSync and StopContainer (their own timeouts, plus this).
DEADLINE = 60


def load(path, message):
    with open(path) as f:
        return json_format.Parse(f.read(), message)


def out(message):
    print(json_format.MessageToJson(message, indent=None))


def follow(path):
    """Copy each log line's message to stderr as it is written (a poll of
    the file's growth: containerd writes it, nothing announces a line)."""
    while True:
        try:
            f = open(path)
            break
        except FileNotFoundError:
            time.sleep(0.1)
    pending = ""
    while True:
        chunk = f.read()
        if not chunk:
            time.sleep(0.05)
            continue
        pending += chunk
        *lines, pending = pending.split("\n")
        for line in lines:
            # TIME STREAM TAG MESSAGE; TAG P is a partial line (no newline yet).
            parts = line.split(" ", 3)
            if len(parts) == 4:
                end = "" if parts[2] == "P" else "\n"
                sys.stderr.write(parts[3] + end)
        sys.stderr.flush()


def main(argv):
    if argv[:1] == ["follow"] and len(argv) == 2:
        follow(argv[1])
        return 0
    if len(argv) < 3 or argv[0] != "--endpoint":
        print(__doc__, file=sys.stderr)
        return 2
    rt = RuntimeServiceStub(grpc.insecure_channel(argv[1]))
    cmd, args = argv[2], argv[3:]
    try:
        if cmd == "version":
            out(rt.Version(api.VersionRequest(), timeout=DEADLINE))
        elif cmd == "runp":
            pod = load(args[0], api.PodSandboxConfig())
            print(rt.RunPodSandbox(api.RunPodSandboxRequest(config=pod), timeout=DEADLINE).pod_sandbox_id)
        elif cmd == "create":
            ctr = load(args[1], api.ContainerConfig())
            pod = load(args[2], api.PodSandboxConfig())
            req = api.CreateContainerRequest(pod_sandbox_id=args[0], config=ctr, sandbox_config=pod)
            print(rt.CreateContainer(req, timeout=DEADLINE).container_id)
        elif cmd == "start":
            rt.StartContainer(api.StartContainerRequest(container_id=args[0]), timeout=DEADLINE)
        elif cmd == "inspect":
            r = rt.ContainerStatus(api.ContainerStatusRequest(container_id=args[0], verbose=True), timeout=DEADLINE)
            print(json.dumps({"status": json_format.MessageToDict(r.status),
                              "info": json.loads(r.info.get("info", "{}"))}))
        elif cmd == "inspectp":
            r = rt.PodSandboxStatus(api.PodSandboxStatusRequest(pod_sandbox_id=args[0], verbose=True), timeout=DEADLINE)
            print(json.dumps({"status": json_format.MessageToDict(r.status),
                              "info": json.loads(r.info.get("info", "{}"))}))
        elif cmd == "exec":
            if len(args) < 4 or args[2] != "--":
                print(__doc__, file=sys.stderr)
                return 2
            secs = int(args[1])
            r = rt.ExecSync(api.ExecSyncRequest(container_id=args[0], cmd=args[3:], timeout=secs),
                            timeout=secs + DEADLINE)
            sys.stdout.buffer.write(r.stdout)
            sys.stderr.buffer.write(r.stderr)
            return r.exit_code
        elif cmd == "stop":
            secs = int(args[1])
            rt.StopContainer(api.StopContainerRequest(container_id=args[0], timeout=secs), timeout=secs + DEADLINE)
        elif cmd == "rm":
            rt.RemoveContainer(api.RemoveContainerRequest(container_id=args[0]), timeout=DEADLINE)
        elif cmd == "stopp":
            rt.StopPodSandbox(api.StopPodSandboxRequest(pod_sandbox_id=args[0]), timeout=DEADLINE)
        elif cmd == "rmp":
            rt.RemovePodSandbox(api.RemovePodSandboxRequest(pod_sandbox_id=args[0]), timeout=DEADLINE)
        else:
            print(f"cri: unknown command {cmd!r}\n{__doc__}", file=sys.stderr)
            return 2
    except grpc.RpcError as e:
        print(f"cri: {cmd}: {e.code().name}: {e.details()}", file=sys.stderr)
        return 1
    except (OSError, json_format.ParseError, IndexError, ValueError) as e:
        print(f"cri: {cmd}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
