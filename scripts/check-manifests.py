#!/usr/bin/env python3
"""Check every manifest under deploy/openshift and deploy/kubernetes.

Usage: check-manifests.py [--self-test] [--kubernetes-version X.Y.Z]

1. Schema: each Kubernetes object validates, strictly (unknown fields are
   errors), against the Kubernetes OpenAPI schemas bundled in PyPI's
   kubernetes-validate (offline). What is not a Kubernetes object is turned
   into one first: the machine-config operator's static-pod file entry
   (mode, path, contents.inline) is checked as a file entry and its Pod
   validated; a container on its own is validated inside a Pod; a
   strategic-merge patch of a DaemonSet is applied (containers and volumes
   merged by name) to a stand-in of the DaemonSet it patches (frr-k8s', or
   MetalLB's speaker in FRR mode: hostNetwork, FRR's sockets in an emptyDir
   named frr-sockets) and the result validated. A ServiceMonitor is a CRD,
   not in those schemas: its fields are checked against the Service it
   selects.
2. Posture of every ribbridge container: not privileged, no privilege
   escalation, read-only root filesystem, capabilities drop [ALL], and the
   user and capabilities of its mode (`--mode` in its args; the file name
   says `repair` exactly when it is):
   - observe: runAsNonRoot true, runAsUser and runAsGroup FRR's non-root
     ids, add nothing, no `--user` flag in args or preStop;
   - repair: runAsNonRoot false (explicitly), runAsUser 0, runAsGroup 0,
     add exactly {NET_ADMIN, SETUID, SETGID, SETPCAP} (any order), and
     `--user UID:GID` (both non-zero integers: FRR's ids) in its args and
     the same `--user` in its preStop drain. ribbridge starts as root,
     becomes UID:GID keeping NET_ADMIN alone and drops the rest, bounding
     set included. The old shape (runAsUser FRR's uid with NET_ADMIN added)
     is refused by name: CRI-O and containerd put capabilities.add in the
     bounding, permitted and effective sets only (no inheritable, no
     ambient), and runc's exec of a non-root uid clears permitted and
     effective, so such a container has no capability (podman, which sets
     ambient capabilities, hides it; scripts/oci-spec.py builds the spec a
     node would run).
   Also: requests and limits, startup/readiness/liveness httpGet probes
   on 127.0.0.1:7585 whose paths the daemon serves (read from src/http/server.rs),
   `--listen 127.0.0.1:7585`, FRR's socket directory at /var/run/frr
   mounted read-only in observe mode; the drain's intent directory, the
   host's /run/ribbridge (hostPath, DirectoryOrCreate), mounted writable at
   /run/ribbridge, and `--drain-state /run/ribbridge/drain` in its args and
   in its preStop drain; the pods hostNetwork, with no pod-wide runAsUser
   0; a static pod system-node-critical, tolerating everything, with a
   termination grace,
   named to start after FRR (0000-frr-k8s.yaml) and before kube-vip
   (0010-...). Other containers: not privileged, drop ALL, add nothing,
   read-only root. The same container is written in several files: they
   must be equal. A tmpfiles.d file entry (/etc/tmpfiles.d/ribbridge.conf)
   makes /run/ribbridge for the ids the container's ribbridge ends up
   running as: `--user` in repair mode, runAsUser:runAsGroup in observe.
3. A sidecar (ribbridge patched into a DaemonSet that runs FRR) has no
   readinessProbe: its readiness would be FRR's pod's, which a zebra
   outage must not turn NotReady; its startup probe is /healthz. Its
   container is the others' less that probe. Its initContainer
   `ribbridge-state` chowns /run/ribbridge to the ids ribbridge runs as,
   as root with CHOWN alone (drop ALL, read-only root).
4. Monitoring: every ServiceMonitor and PodMonitor endpoint relabels the
   Kubernetes node's name into `node` (from __meta_kubernetes_pod_node_name
   or __meta_kubernetes_endpoint_node_name) and yields a job the rules
   select (ribbridge-monitor, ribbridge-router, ribbridge-bmp: its jobLabel
   or a relabeling of `job`), over https with a serverName; a PodMonitor's
   port is a container port of the pods it is for. Every object of
   deploy/kubernetes (patches aside) carries app.kubernetes.io/name,
   component, part-of and version (Cargo.toml's), and
   deploy/kubernetes/kustomization.yaml lists files that exist there.
5. A BMP station (`--vantage bmp` in the ribbridge container's args) reads
   nothing of the node: its pod must not be hostNetwork nor mount a
   hostPath, the container mounts no FRR sockets, adds no capability and
   runs as observe does (non-root, no `--user`), and its probes (the endpoint is on the pod's loopback, out of the
   kubelet's reach) go through the pod's kube-rbac-proxy port over HTTPS,
   on the paths the daemon serves.

--self-test breaks good manifests in known ways (privileged, a capability
added or not dropped, a writable root or socket mount, uid 0 in observe,
repair in the old non-root shape, a repair capability missing or one too
many, `--user` missing, 0:0 or different in the preStop, `--user` in
observe, a probe on a path or port the daemon does not serve, a field of the
wrong type, ...) and fails unless every broken one is refused with the words
of the rule that should refuse it.

Exit status: 0 all good, 1 a manifest is wrong (each problem printed).
Run it with the venv's python that scripts/install-deps.sh makes
(/var/cache/ribbridge/venv/bin/python).
"""

import argparse
import copy
import os
import re
import sys

import yaml

try:
    import kubernetes_validate
except ImportError:
    sys.exit(
        "check-manifests: kubernetes_validate is missing: run scripts/install-deps.sh "
        "and this script with /var/cache/ribbridge/venv/bin/python"
    )

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = ["deploy/openshift", "deploy/kubernetes"]
PORT = 7585
LISTEN = f"127.0.0.1:{PORT}"
SOCKETS = "/var/run/frr"
# The drain's intent: the host's /run/ribbridge, mounted at the same path.
STATE_DIR = "/run/ribbridge"
STATE = f"{STATE_DIR}/drain"
STATE_VOLUME = {"hostPath": {"path": STATE_DIR, "type": "DirectoryOrCreate"}}
TMPFILES = "/etc/tmpfiles.d/ribbridge.conf"
# Static pods start in file-name order: after FRR, before kube-vip.
FRR_MANIFEST = "0000-frr-k8s.yaml"
KUBE_VIP_FIRST = "0010-kube-vip-api.yaml"
# Repair mode's capabilities: NET_ADMIN kept; SETUID and SETGID to become
# FRR's user (--user), SETPCAP to cut the bounding set, all three dropped.
REPAIR_CAPS = {"NET_ADMIN", "SETUID", "SETGID", "SETPCAP"}
# The jobs deploy/prometheus/ribbridge-rules.yaml selects.
JOBS = {"ribbridge-monitor", "ribbridge-router", "ribbridge-bmp"}
NODE_META = {"__meta_kubernetes_pod_node_name", "__meta_kubernetes_endpoint_node_name"}
K8S_LABELS = ("app.kubernetes.io/name", "app.kubernetes.io/component",
              "app.kubernetes.io/part-of", "app.kubernetes.io/version")
KUSTOMIZATION = "deploy/kubernetes/kustomization.yaml"


def crate_version():
    """Cargo.toml's package version: the app.kubernetes.io/version label."""
    text = open(os.path.join(REPO, "Cargo.toml")).read()
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)


SERVER = "src/http/server.rs"


def served_paths():
    """The paths the HTTP server answers (its `"/path" =>` match arms)."""
    text = open(os.path.join(REPO, SERVER)).read()
    paths = set(re.findall(r'"(/[a-z]+)"\s*=>', text))
    if not {"/healthz", "/readyz"} <= paths:
        sys.exit(f"check-manifests: {SERVER} serves {sorted(paths)}: no /healthz or /readyz?")
    return paths


def stand_in_daemonset(name, namespace):
    """The DaemonSet a sidecar patch applies to: its FRR container and the
    emptyDir FRR's sockets live in, as frr-k8s and MetalLB's speaker have."""
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "hostNetwork": True,
                    "containers": [
                        {
                            "name": "frr",
                            "image": "quay.io/frrouting/frr:10.4.3",
                            "volumeMounts": [{"name": "frr-sockets", "mountPath": SOCKETS}],
                        }
                    ],
                    "volumes": [{"name": "frr-sockets", "emptyDir": {}}],
                },
            },
        },
    }


def merge(base, patch):
    """Strategic merge as far as these patches use it: maps merge key by
    key; lists of maps with a `name` merge item by name; other lists and
    scalars are replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = merge(base[k], v) if k in base else copy.deepcopy(v)
        return out
    if (
        isinstance(base, list)
        and isinstance(patch, list)
        and all(isinstance(i, dict) and "name" in i for i in base + patch)
    ):
        out = [copy.deepcopy(i) for i in base]
        for item in patch:
            for i, old in enumerate(out):
                if old["name"] == item["name"]:
                    out[i] = merge(old, item)
                    break
            else:
                out.append(copy.deepcopy(item))
        return out
    return copy.deepcopy(patch)


def pod_of_container(c):
    """A container alone, in the smallest pod that gives it its volume."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "ribbridge"},
        "spec": {
            "hostNetwork": True,
            "containers": [c],
            "volumes": [
                {"name": "frr-sockets", "hostPath": {"path": "/run/frr-k8s/sockets"}},
                {"name": "ribbridge-state", **copy.deepcopy(STATE_VOLUME)},
            ],
        },
    }


class Checker:
    def __init__(self, version, paths):
        self.version = version
        self.paths = paths
        self.problems = []

    def fail(self, where, what):
        self.problems.append(f"{where}: {what}")

    def schema(self, where, obj):
        try:
            kubernetes_validate.validate(obj, self.version, strict=True)
        except kubernetes_validate.ValidationError as e:
            path = "/".join(str(p) for p in e.path)
            self.fail(where, f"{obj.get('kind')} does not validate at {path or '/'}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError as e:
            self.fail(where, f"no schema: {e}")

    # -- posture ---------------------------------------------------------

    def ribbridge_container(self, where, c, volumes, repair_name, proxy_port=None, sidecar=False):
        sc = c.get("securityContext") or {}
        args = [str(a) for a in c.get("args") or []]
        station = is_station(c)
        mode = None
        for i, a in enumerate(args):
            if a == "--mode" and i + 1 < len(args):
                mode = args[i + 1]
            elif a.startswith("--mode="):
                mode = a.split("=", 1)[1]
        if mode not in ("observe", "repair"):
            self.fail(where, f"args {args}: no --mode observe|repair (a manifest names its mode, which its file name and posture follow)")
        if (mode == "repair") != repair_name:
            self.fail(where, f"mode {mode} but the file name {'says' if repair_name else 'does not say'} repair")
        listen = None
        for i, a in enumerate(args):
            if a == "--listen" and i + 1 < len(args):
                listen = args[i + 1]
            elif a.startswith("--listen="):
                listen = a.split("=", 1)[1]
        if listen != LISTEN:
            self.fail(where, f"--listen {listen}: expected {LISTEN} (loopback, the registered port)")
        if sc.get("privileged") is not False:
            self.fail(where, f"privileged is {sc.get('privileged')!r}: must be false")
        if sc.get("allowPrivilegeEscalation") is not False:
            self.fail(where, "allowPrivilegeEscalation must be false")
        if sc.get("readOnlyRootFilesystem") is not True:
            self.fail(where, "readOnlyRootFilesystem must be true")
        uid, gid = sc.get("runAsUser"), sc.get("runAsGroup")
        caps = sc.get("capabilities") or {}
        add = caps.get("add")
        if caps.get("drop") != ["ALL"]:
            self.fail(where, f"capabilities.drop {caps.get('drop')!r}: must be [ALL]")
        hook = [str(a) for a in ((((c.get("lifecycle") or {}).get("preStop") or {}).get("exec") or {}).get("command")) or []]
        users, hook_users = user_flags(args), user_flags(hook)
        if mode == "repair":
            self.repair_user(where, sc, uid, gid, add, users, hook_users, hook)
        else:
            if sc.get("runAsNonRoot") is not True:
                self.fail(where, "runAsNonRoot must be true")
            if not is_id(uid) or uid == 0:
                self.fail(where, f"runAsUser {uid!r}: must be FRR's (non-root) uid")
            if not is_id(gid) or gid == 0:
                self.fail(where, f"runAsGroup {gid!r}: must be FRR's (non-root) gid")
            if add is not None:
                self.fail(where, f"capabilities.add {add!r} in {mode} mode: expected None (a non-root user gets no capability anyway)")
            if users or hook_users:
                self.fail(where, f"--user in {mode} mode (args {users}, preStop {hook_users}): only repair starts as root and switches; observe runs as runAsUser:runAsGroup")
        res = c.get("resources") or {}
        for kind in ("requests", "limits"):
            for r in ("cpu", "memory"):
                if r not in (res.get(kind) or {}):
                    self.fail(where, f"resources.{kind}.{r} missing (size it from docs/PERFORMANCE.md)")
        want = {
            "startupProbe": {"/healthz", "/readyz"},
            "readinessProbe": {"/readyz"},
            "livenessProbe": {"/healthz"},
        }
        if sidecar:
            if "readinessProbe" in c:
                self.fail(where, "readinessProbe in a sidecar of FRR's pod: its readiness is the pod's, "
                                 "and zebra down would turn FRR's pod NotReady (keep startup and liveness on /healthz)")
            del want["readinessProbe"]
            want["startupProbe"] = {"/healthz"}
        for probe, paths in want.items():
            p = (c.get(probe) or {}).get("httpGet")
            if not p:
                self.fail(where, f"{probe}: no httpGet probe")
                continue
            if p.get("path") not in paths or p.get("path") not in self.paths:
                self.fail(where, f"{probe} path {p.get('path')!r}: expected one of {sorted(paths)}, served by {SERVER}")
            if station:
                if proxy_port is None or p.get("port") != proxy_port or "host" in p or p.get("scheme") != "HTTPS":
                    self.fail(where, f"{probe} on {p.get('host')}:{p.get('port')} {p.get('scheme')}: a station is probed through its kube-rbac-proxy (HTTPS, port {proxy_port}, no host)")
                continue
            if p.get("port") != PORT or p.get("host") != "127.0.0.1":
                self.fail(where, f"{probe} on {p.get('host')}:{p.get('port')}: expected 127.0.0.1:{PORT}")
            if p.get("scheme", "HTTP") != "HTTP":
                self.fail(where, f"{probe}: scheme {p.get('scheme')}: the endpoint is plain HTTP")
        mounts = [m for m in c.get("volumeMounts") or [] if m.get("mountPath") == SOCKETS]
        if station:
            if mounts:
                self.fail(where, f"a BMP station mounts FRR's sockets at {SOCKETS}: it reads no FRR")
        elif len(mounts) != 1:
            self.fail(where, f"FRR's socket directory is not mounted at {SOCKETS}")
        if not station:
            self.drain_state(where, c, args, volumes)
        for m in c.get("volumeMounts") or []:
            vol = volumes.get(m.get("name"))
            if vol is None:
                self.fail(where, f"volumeMount {m.get('name')!r}: no such volume in the pod")
                continue
            state = m.get("mountPath") == STATE_DIR
            if mode == "observe" and m.get("readOnly") is not True and not state and ("hostPath" in vol or m.get("mountPath") == SOCKETS):
                self.fail(where, f"volumeMount {m.get('name')!r} at {m.get('mountPath')}: must be readOnly in observe mode")
            if m.get("mountPath") == SOCKETS and not ("hostPath" in vol or "emptyDir" in vol):
                self.fail(where, f"{SOCKETS} is volume {vol}: expected FRR's hostPath or shared emptyDir")
        return mode

    def repair_user(self, where, sc, uid, gid, add, users, hook_users, hook):
        """Repair mode: the container starts as root with exactly the four
        capabilities ribbridge needs to become FRR's user keeping
        NET_ADMIN (`--user UID:GID` in its args and in its preStop drain):
        CRI-O and containerd put capabilities.add in the bounding,
        permitted and effective sets only, so a container started as a
        non-root uid has none left after runc's execve (scripts/oci-spec.py
        shows the sets)."""
        if is_id(uid) and uid != 0 and add:
            self.fail(where, f"runAsUser {uid} with capabilities.add {add!r}: a runtime gives a non-root user no capability (CRI-O and containerd set no ambient capability, so the effective set is empty after exec); start as root (runAsUser 0, runAsGroup 0, runAsNonRoot false) and pass --user UID:GID")
        if sc.get("runAsNonRoot") is not False:
            self.fail(where, f"runAsNonRoot {sc.get('runAsNonRoot')!r}: must be false, explicitly, in repair mode (it starts as root and becomes --user itself)")
        if uid != 0 or not is_id(uid):
            self.fail(where, f"runAsUser {uid!r}: must be 0 in repair mode (it starts as root, then switches to --user)")
        if gid != 0 or not is_id(gid):
            self.fail(where, f"runAsGroup {gid!r}: must be 0 in repair mode (it starts as root, then switches to --user)")
        if not isinstance(add, list) or len(add) != len(REPAIR_CAPS) or set(add) != REPAIR_CAPS:
            self.fail(where, f"capabilities.add {add!r} in repair mode: expected exactly {sorted(REPAIR_CAPS)} (NET_ADMIN kept; SETUID, SETGID, SETPCAP to become --user and cut the bounding set)")
        if len(users) != 1:
            self.fail(where, f"args: {len(users)} --user flags: expected one --user UID:GID (FRR's ids, both non-zero), which ribbridge switches to")
        elif not good_user(users[0]):
            self.fail(where, f"args: --user {users[0]}: expected UID:GID, both non-zero integers (FRR's user and group)")
        if "drain" in hook:
            if len(hook_users) != 1:
                self.fail(where, f"preStop {hook}: {len(hook_users)} --user flags: expected the args' --user")
            elif len(users) == 1 and hook_users[0] != users[0]:
                self.fail(where, f"preStop --user {hook_users[0]} differs from the args' --user {users[0]}")

    def drain_state(self, where, c, args, volumes):
        """The drain's intent: one writable mount of the host's
        /run/ribbridge at /run/ribbridge, and the daemon and the preStop
        drain both told the file."""
        mounts = [m for m in c.get("volumeMounts") or [] if m.get("mountPath") == STATE_DIR]
        if len(mounts) != 1:
            self.fail(where, f"the drain's intent directory is not mounted at {STATE_DIR}")
        else:
            m = mounts[0]
            if m.get("readOnly") is True:
                self.fail(where, f"volumeMount {m.get('name')!r} at {STATE_DIR}: must be writable (drain writes the intent there)")
            vol = volumes.get(m.get("name"))
            if vol is not None and vol.get("hostPath") != STATE_VOLUME["hostPath"]:
                self.fail(where, f"{STATE_DIR} is volume {vol}: expected hostPath {STATE_VOLUME['hostPath']} (the host's tmpfs: kept across restarts, not reboots)")
        if not has_flag(args, "--drain-state", STATE):
            self.fail(where, f"args {args}: no --drain-state {STATE}")
        hook = ((((c.get("lifecycle") or {}).get("preStop") or {}).get("exec") or {}).get("command")) or []
        hook = [str(a) for a in hook]
        if "drain" not in hook:
            self.fail(where, "no preStop `ribbridge drain` hook")
        elif not has_flag(hook, "--drain-state", STATE):
            self.fail(where, f"preStop {hook}: no --drain-state {STATE}")

    def other_container(self, where, c):
        sc = c.get("securityContext") or {}
        caps = sc.get("capabilities") or {}
        if sc.get("privileged") is True or sc.get("allowPrivilegeEscalation") is not False:
            self.fail(where, "privileged or may escalate privileges")
        if caps.get("drop") != ["ALL"] or caps.get("add"):
            self.fail(where, f"capabilities {caps}: drop [ALL] and add nothing")
        if sc.get("readOnlyRootFilesystem") is not True:
            self.fail(where, "readOnlyRootFilesystem must be true")

    def state_init(self, where, spec, ribbridge):
        """The initContainer that makes /run/ribbridge ribbridge's: chown to
        the ids it runs as, root with CHOWN alone."""
        inits = [c for c in spec.get("initContainers") or [] if c.get("name") == "ribbridge-state"]
        if not inits:
            self.fail(where, "no initContainer ribbridge-state: /run/ribbridge would be root's (DirectoryOrCreate) and drain could not record its intent")
            return
        c = inits[0]
        w = f"{where}: initContainer ribbridge-state"
        sc = c.get("securityContext") or {}
        caps = sc.get("capabilities") or {}
        if sc.get("privileged") is not False or sc.get("allowPrivilegeEscalation") is not False:
            self.fail(w, "privileged or may escalate privileges")
        if caps.get("drop") != ["ALL"] or caps.get("add") != ["CHOWN"]:
            self.fail(w, f"capabilities {caps}: drop [ALL], add [CHOWN] alone")
        if sc.get("readOnlyRootFilesystem") is not True:
            self.fail(w, "readOnlyRootFilesystem must be true")
        uid, gid = runs_as(ribbridge)
        if [str(a) for a in c.get("command") or []] != ["chown", f"{uid}:{gid}", STATE_DIR]:
            self.fail(w, f"command {c.get('command')}: expected chown {uid}:{gid} {STATE_DIR} (the ids ribbridge runs as)")
        mounts = [(m.get("name"), m.get("mountPath")) for m in c.get("volumeMounts") or []]
        state = [v["name"] for v in spec.get("volumes") or [] if v.get("hostPath") == STATE_VOLUME["hostPath"]]
        if len(mounts) != 1 or mounts[0][1] != STATE_DIR or mounts[0][0] not in state:
            self.fail(w, f"mounts {mounts}: the host's {STATE_DIR} alone")

    def pod_spec(self, where, spec, repair_name, static, sidecar=False, own=False):
        volumes = {v["name"]: v for v in spec.get("volumes") or []}
        psc = spec.get("securityContext") or {}
        if psc.get("runAsUser") == 0:
            self.fail(where, "pod runAsUser 0")
        containers = spec.get("containers") or []
        if any(c.get("name") == "ribbridge" and is_station(c) for c in containers):
            return self.station_pod(where, spec, volumes)
        if spec.get("hostNetwork") is not True:
            self.fail(where, "hostNetwork must be true (ribbridge reads the node's routing tables)")
        ribbridge = []
        for c in containers:
            w = f"{where}: container {c.get('name')}"
            if c.get("name") == "ribbridge":
                ribbridge.append(c)
                self.ribbridge_container(w, c, volumes, repair_name, sidecar=sidecar)
                if sidecar:
                    self.sidecars.add(id(c))
                if sidecar or own:
                    self.state_init(where, spec, c)
            elif static or c.get("name", "").startswith("kube-rbac-proxy"):
                self.other_container(w, c)
        if static:
            if spec.get("priorityClassName") != "system-node-critical":
                self.fail(where, "priorityClassName must be system-node-critical")
            tol = spec.get("tolerations")
            if not isinstance(tol, list) or {"operator": "Exists"} not in tol:
                self.fail(where, "tolerations must hold {operator: Exists}")
            if not isinstance(spec.get("terminationGracePeriodSeconds"), int):
                self.fail(where, "terminationGracePeriodSeconds missing")
            for v in volumes.values():
                if "hostPath" in v and v["hostPath"].get("path") not in ("/run/frr-k8s/sockets", STATE_DIR):
                    self.fail(where, f"hostPath {v['hostPath'].get('path')}: only FRR's socket directory and {STATE_DIR}")
        return ribbridge

    def station_pod(self, where, spec, volumes):
        """A BMP station's pod: no host access; probed through its proxy.
        Its container is not one of the node's, so it is not returned for
        the copies-must-be-equal check."""
        if spec.get("hostNetwork"):
            self.fail(where, "a BMP station must not be hostNetwork: it reads nothing of the node")
        for v in volumes.values():
            if "hostPath" in v:
                self.fail(where, f"a BMP station mounts hostPath {v['hostPath'].get('path')}: it reads nothing of the node")
        proxy_port = None
        for c in spec.get("containers") or []:
            if c.get("name", "").startswith("kube-rbac-proxy"):
                ports = [p.get("containerPort") for p in c.get("ports") or []]
                proxy_port = ports[0] if ports else None
        for c in spec.get("containers") or []:
            w = f"{where}: container {c.get('name')}"
            if c.get("name") == "ribbridge":
                self.ribbridge_container(w, c, volumes, False, proxy_port)
                args = c.get("args") or []
                allow = [b for a, b in zip(args, args[1:]) if a == "--bmp-allow"]
                allow += [a.split("=", 1)[1] for a in args if a.startswith("--bmp-allow=")]
                if not allow:
                    self.fail(w, "a BMP station must name the routers' networks with --bmp-allow CIDR (it refuses to start without)")
                elif any(a in ("0.0.0.0/0", "::/0") for a in allow):
                    self.fail(w, f"--bmp-allow {allow}: the example must not accept every address")
            else:
                self.other_container(w, c)
        return []

    # -- files -----------------------------------------------------------

    def check_file(self, rel, docs):
        """Check one file's documents; returns {variant: container} for the
        consistency check."""
        repair_name = "repair" in os.path.basename(rel)
        found = []
        for doc in docs:
            if doc is None:
                continue
            if set(doc) == {"mode", "path", "contents"} and str(doc["path"]).startswith("/etc/tmpfiles.d/"):
                self.tmpfiles_entry(rel, doc)
            elif set(doc) == {"mode", "path", "contents"}:
                found += self.file_entry(rel, doc, repair_name)
            elif "kind" not in doc and "image" in doc:
                self.schema(rel, pod_of_container(doc))
                volumes = {"frr-sockets": {"hostPath": {}}, "ribbridge-state": STATE_VOLUME}
                self.ribbridge_container(f"{rel}: container {doc.get('name')}", doc, volumes, repair_name)
                found.append(doc)
            elif doc.get("kind") == "DaemonSet" and "selector" not in doc.get("spec", {}):
                base = stand_in_daemonset(doc["metadata"]["name"], doc["metadata"].get("namespace"))
                merged = merge(base, doc)
                self.schema(rel, merged)
                found += self.pod_spec(rel, merged["spec"]["template"]["spec"], repair_name, static=False, sidecar=True)
            elif doc.get("kind") == "ServiceMonitor":
                self.labels(rel, doc)
                self.service_monitor(rel, doc)
            elif doc.get("kind") == "PodMonitor":
                self.labels(rel, doc)
                self.pod_monitor(rel, doc)
            elif doc.get("kind") == "Kustomization":
                self.kustomization(rel, doc)
            elif doc.get("kind") == "PrometheusRule":
                pass  # a CRD: generated and checked by scripts/gen-prometheus-objects.py, promtool
            elif "kind" in doc:
                self.schema(rel, doc)
                self.labels(rel, doc)
                spec = (doc.get("spec") or {}).get("template", {}).get("spec")
                if spec:
                    # ribbridge's own DaemonSet on plain Kubernetes makes its
                    # intent directory like the sidecars do.
                    own = rel.startswith("deploy/kubernetes/") and doc.get("kind") == "DaemonSet"
                    found += self.pod_spec(rel, spec, repair_name, static=False, own=own)
            else:
                self.fail(rel, f"a document that is no manifest: keys {sorted(doc)}")
        return found

    def file_entry(self, rel, doc, repair_name):
        path = str(doc["path"])
        if doc["mode"] != 0o644:
            self.fail(rel, f"mode {oct(doc['mode']) if isinstance(doc['mode'], int) else doc['mode']}: expected 0644")
        if not path.startswith("/etc/kubernetes/manifests/"):
            self.fail(rel, f"path {path}: a static pod lives in /etc/kubernetes/manifests/")
        name = os.path.basename(path)
        if not FRR_MANIFEST < name < KUBE_VIP_FIRST:
            self.fail(rel, f"{name} does not start after {FRR_MANIFEST} and before {KUBE_VIP_FIRST}")
        try:
            pod = yaml.safe_load(doc["contents"]["inline"])
        except (yaml.YAMLError, KeyError, TypeError) as e:
            self.fail(rel, f"contents.inline is not a YAML Pod: {e}")
            return []
        if not isinstance(pod, dict) or pod.get("kind") != "Pod":
            self.fail(rel, "contents.inline does not hold a Pod")
            return []
        self.schema(f"{rel} (contents.inline)", pod)
        return self.pod_spec(f"{rel} (contents.inline)", pod["spec"], repair_name, static=True)

    def tmpfiles_entry(self, rel, doc):
        """/etc/tmpfiles.d/ribbridge.conf: /run/ribbridge made at boot for
        the ribbridge containers' uid:gid (checked in run())."""
        if doc["mode"] != 0o644:
            self.fail(rel, f"mode {oct(doc['mode']) if isinstance(doc['mode'], int) else doc['mode']}: expected 0644")
        if doc["path"] != TMPFILES:
            self.fail(rel, f"path {doc['path']}: expected {TMPFILES}")
        lines = [l.split() for l in str((doc.get("contents") or {}).get("inline", "")).splitlines()]
        lines = [l for l in lines if l and not l[0].startswith("#")]
        if len(lines) != 1 or len(lines[0]) != 6 or lines[0][:3] != ["d", STATE_DIR, "0755"] or lines[0][5] != "-":
            self.fail(rel, f"contents {lines}: expected one line `d {STATE_DIR} 0755 UID GID -`")
            return
        self.tmpfiles_owner = (rel, lines[0][3], lines[0][4])

    def labels(self, rel, doc):
        """deploy/kubernetes' objects carry the recommended labels (the
        pod templates too)."""
        if not rel.startswith("deploy/kubernetes/"):
            return
        metas = [(doc.get("kind"), doc.get("metadata") or {})]
        tmpl = (doc.get("spec") or {}).get("template")
        if isinstance(tmpl, dict):
            metas.append((f"{doc.get('kind')}'s pod template", tmpl.get("metadata") or {}))
        for what, meta in metas:
            have = meta.get("labels") or {}
            missing = [k for k in K8S_LABELS if not have.get(k)]
            if missing:
                self.fail(rel, f"{what} {meta.get('name', '')}: no label {', '.join(missing)}")
            elif have["app.kubernetes.io/version"] != self.version_label:
                self.fail(rel, f"{what} {meta.get('name', '')}: app.kubernetes.io/version {have['app.kubernetes.io/version']!r}, Cargo.toml says {self.version_label!r}")
            elif have["app.kubernetes.io/part-of"] != "ribbridge":
                self.fail(rel, f"{what} {meta.get('name', '')}: app.kubernetes.io/part-of must be ribbridge")

    def scrape_endpoint(self, rel, ep, job_label_job):
        """One ServiceMonitor or PodMonitor endpoint: the node label, a
        job the rules select, TLS with a server name."""
        relabel = ep.get("relabelings") or []
        node = [r for r in relabel if r.get("targetLabel") == "node"
                and set(r.get("sourceLabels") or []) & NODE_META and r.get("action", "replace") == "replace"]
        if not node:
            self.fail(rel, f"endpoint {ep.get('port')!r}: no relabeling of {sorted(NODE_META)} into `node` (the cluster view keys rows by it)")
        jobs = [r.get("replacement") for r in relabel if r.get("targetLabel") == "job"]
        job = jobs[-1] if jobs else job_label_job
        if job not in JOBS:
            self.fail(rel, f"endpoint {ep.get('port')!r}: job {job!r}, not one the rules select ({sorted(JOBS)})")
        if ep.get("scheme") != "https":
            self.fail(rel, "endpoint scheme must be https (TLS from the proxy)")
        if not (ep.get("tlsConfig") or {}).get("serverName"):
            self.fail(rel, "endpoint tlsConfig.serverName missing")
        return job

    def pod_monitor(self, rel, doc):
        spec = doc.get("spec") or {}
        ports = set()
        for docs in self.files.values():
            for d in docs:
                if isinstance(d, dict) and d.get("kind") == "DaemonSet":
                    for c in (d.get("spec") or {}).get("template", {}).get("spec", {}).get("containers") or []:
                        ports.update(p.get("name") for p in c.get("ports") or [])
        job_label = spec.get("jobLabel")
        for ep in spec.get("podMetricsEndpoints") or []:
            if ep.get("port") not in ports:
                self.fail(rel, f"endpoint port {ep.get('port')!r} is no container port of a DaemonSet here")
            self.scrape_endpoint(rel, ep, None if job_label else f"{doc['metadata'].get('namespace')}/{doc['metadata']['name']}")
        if not spec.get("podMetricsEndpoints"):
            self.fail(rel, "PodMonitor without podMetricsEndpoints")

    def kustomization(self, rel, doc):
        here = os.path.dirname(rel)
        for key in ("resources",):
            for r in doc.get(key) or []:
                if not os.path.isfile(os.path.join(REPO, here, r)) or f"{here}/{r}" not in self.files:
                    self.fail(rel, f"{key}: {r} is no manifest of {here}")
        for p in doc.get("patches") or []:
            path = p.get("path") if isinstance(p, dict) else None
            if path and not os.path.isfile(os.path.join(REPO, here, path)):
                self.fail(rel, f"patches: {path} does not exist")

    def service_monitor(self, rel, doc):
        spec = doc.get("spec") or {}
        services = [d for d in self.all_docs if d and d.get("kind") == "Service"]
        sel = (spec.get("selector") or {}).get("matchLabels") or {}
        match = [s for s in services if sel and all(s["metadata"].get("labels", {}).get(k) == v for k, v in sel.items())]
        if len(match) != 1:
            self.fail(rel, f"ServiceMonitor selects {len(match)} Services, not one")
            return
        svc = match[0]
        ports = {p.get("name") for p in svc["spec"].get("ports", [])}
        for ep in spec.get("endpoints") or []:
            if ep.get("port") not in ports:
                self.fail(rel, f"endpoint port {ep.get('port')!r} is not a port of Service {svc['metadata']['name']}")
            label = spec.get("jobLabel")
            self.scrape_endpoint(rel, ep, svc["metadata"].get("labels", {}).get(label) if label else svc["metadata"]["name"])
            want = f"{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc"
            if (ep.get("tlsConfig") or {}).get("serverName") != want:
                self.fail(rel, f"tlsConfig.serverName must be {want}")

    def run(self, files):
        """files: {relative path: [documents]}; returns the problems."""
        self.problems = []
        self.tmpfiles_owner = None
        self.sidecars = set()
        self.files = files
        self.version_label = crate_version()
        self.all_docs = [d for docs in files.values() for d in docs]
        containers = {}
        for rel, docs in sorted(files.items()):
            try:
                found = self.check_file(rel, docs)
            except (AttributeError, KeyError, TypeError, IndexError) as e:
                # A shape this checker cannot walk is wrong too.
                self.fail(rel, f"malformed ({type(e).__name__}: {e})")
                continue
            for c in found:
                containers.setdefault("repair" in os.path.basename(rel), []).append((rel, c))
        if self.tmpfiles_owner is None:
            self.fail("deploy/openshift", f"no tmpfiles.d file entry makes {STATE_DIR} (ribbridge-tmpfiles.yaml)")
        else:
            rel, uid, gid = self.tmpfiles_owner
            for _, cs in containers.items():
                for crel, c in cs:
                    ruid, rgid = runs_as(c)
                    if [uid, gid] != [ruid, rgid]:
                        self.fail(rel, f"makes {STATE_DIR} for {uid}:{gid}, but {crel}'s ribbridge runs as {ruid}:{rgid}")
        for variant, cs in containers.items():
            first_rel, first = cs[0]
            for rel, c in cs[1:]:
                if strip(c, self.sidecars, first) != strip(first, self.sidecars, c):
                    self.fail(rel, f"its ribbridge container differs from {first_rel}'s")
        if KUSTOMIZATION not in files:
            self.fail(KUSTOMIZATION, "missing: plain Kubernetes' kustomize base")
        return self.problems


def load(rel):
    with open(os.path.join(REPO, rel)) as f:
        return list(yaml.safe_load_all(f))


def manifests():
    files = {}
    for d in DIRS:
        for name in sorted(os.listdir(os.path.join(REPO, d))):
            if name.endswith(".yaml"):
                files[f"{d}/{name}"] = load(f"{d}/{name}")
    return files


def strip(c, sidecars, other):
    """A container as compared with `other`: less its readinessProbe when
    either is a sidecar (a sidecar has none; the copies are equal but for
    it)."""
    if id(c) in sidecars or id(other) in sidecars:
        c = {k: v for k, v in c.items() if k != "readinessProbe"}
    return c


def has_flag(args, flag, value):
    """`flag value` or `flag=value` in args."""
    return f"{flag}={value}" in args or any(a == flag and b == value for a, b in zip(args, args[1:]))


def user_flags(args):
    """The values of every `--user X` / `--user=X` in args."""
    out = [a.split("=", 1)[1] for a in args if a.startswith("--user=")]
    out += [b for a, b in zip(args, args[1:]) if a == "--user"]
    if args and args[-1] == "--user":
        out.append("")
    return out


def good_user(value):
    """UID:GID, both non-zero integers."""
    m = re.fullmatch(r"([0-9]+):([0-9]+)", value)
    return bool(m) and int(m.group(1)) != 0 and int(m.group(2)) != 0


def is_id(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def runs_as(c):
    """The uid and gid the container's ribbridge ends up running as:
    repair's --user, else runAsUser:runAsGroup."""
    args = [str(a) for a in c.get("args") or []]
    users = user_flags(args)
    if has_flag(args, "--mode", "repair") and len(users) == 1 and ":" in users[0]:
        return users[0].split(":", 1)
    sc = c.get("securityContext") or {}
    return [str(sc.get("runAsUser")), str(sc.get("runAsGroup"))]


def is_station(c):
    """A ribbridge container running the BMP station."""
    args = [str(a) for a in c.get("args") or []]
    return "--vantage=bmp" in args or any(
        a == "--vantage" and b == "bmp" for a, b in zip(args, args[1:])
    )


def ribbridge_of(doc):
    """The ribbridge container (a live reference) inside a document."""
    if set(doc) == {"mode", "path", "contents"}:
        return None
    if "image" in doc and "kind" not in doc:
        return doc
    for c in doc.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
        if c.get("name") == "ribbridge":
            return c
    return None


def self_test(checker, files):
    """Each breakage of a good manifest must be refused."""
    base = "deploy/openshift/ribbridge-container.yaml"
    repair = "deploy/openshift/ribbridge-container-repair.yaml"
    entry = "deploy/openshift/0005-ribbridge.yaml"
    patch = "deploy/kubernetes/frr-k8s-daemonset-patch.yaml"
    station = "deploy/kubernetes/bmp-station.yaml"
    assert not checker.run(files), "the manifests must pass before they are broken"

    def sc(c):
        return c.setdefault("securityContext", {})

    # (file, what, how, a words of the problem it must cause): the words
    # make sure the right rule refused it (any change to one copy of the
    # container would also trip the copies-must-be-equal rule).
    breakages = [
        (base, "privileged", lambda c: sc(c).update(privileged=True), "privileged is True"),
        (base, "privilege escalation", lambda c: sc(c).pop("allowPrivilegeEscalation"), "allowPrivilegeEscalation"),
        (base, "drop not ALL", lambda c: sc(c)["capabilities"].update(drop=["NET_RAW"]), "capabilities.drop"),
        (base, "NET_ADMIN in observe", lambda c: sc(c)["capabilities"].update(add=["NET_ADMIN"]), "in observe mode"),
        (repair, "SYS_ADMIN added", lambda c: sc(c)["capabilities"]["add"].append("SYS_ADMIN"), "in repair mode"),
        (repair, "SETPCAP missing", lambda c: sc(c)["capabilities"]["add"].remove("SETPCAP"), "in repair mode"),
        (repair, "NET_ADMIN alone", lambda c: sc(c)["capabilities"].update(add=["NET_ADMIN"]), "in repair mode"),
        (repair, "the old non-root shape", lambda c: sc(c).update(runAsUser=100, runAsGroup=101, runAsNonRoot=True, capabilities={"drop": ["ALL"], "add": ["NET_ADMIN"]}), "gives a non-root user no capability"),
        (repair, "runAsUser 100 with the four capabilities", lambda c: sc(c).update(runAsUser=100), "gives a non-root user no capability"),
        (repair, "runAsGroup 101", lambda c: sc(c).update(runAsGroup=101), "runAsGroup 101: must be 0"),
        (repair, "runAsNonRoot left out", lambda c: sc(c).pop("runAsNonRoot"), "runAsNonRoot None: must be false"),
        (repair, "allowPrivilegeEscalation true", lambda c: sc(c).update(allowPrivilegeEscalation=True), "allowPrivilegeEscalation must be false"),
        (repair, "privileged in repair", lambda c: sc(c).update(privileged=True), "privileged is True"),
        (repair, "writable root in repair", lambda c: sc(c).update(readOnlyRootFilesystem=False), "readOnlyRootFilesystem"),
        (repair, "--user missing from args", lambda c: c.update(args=c["args"][:-2]), "0 --user flags"),
        (repair, "--user 0:0", lambda c: c["args"].__setitem__(-1, "0:0"), "--user 0:0: expected UID:GID, both non-zero"),
        (repair, "--user 100:0", lambda c: c["args"].__setitem__(-1, "100:0"), "--user 100:0: expected UID:GID, both non-zero"),
        (repair, "--user a name", lambda c: c["args"].__setitem__(-1, "frr:frr"), "--user frr:frr: expected UID:GID"),
        (repair, "preStop without --user", lambda c: c["lifecycle"]["preStop"]["exec"].update(command=c["lifecycle"]["preStop"]["exec"]["command"][:-2]), "expected the args' --user"),
        (repair, "preStop with another --user", lambda c: c["lifecycle"]["preStop"]["exec"]["command"].__setitem__(-1, "100:102"), "preStop --user 100:102 differs from the args' --user 100:101"),
        (base, "--user in observe", lambda c: c["args"].extend(["--user", "100:101"]), "--user in observe mode"),
        (base, "--user in observe's preStop", lambda c: c["lifecycle"]["preStop"]["exec"]["command"].extend(["--user=100:101"]), "--user in observe mode"),
        (station, "--user in the station", lambda c: c["args"].extend(["--user", "100:101"]), "--user in observe mode"),
        (base, "runAsNonRoot false in observe", lambda c: sc(c).update(runAsNonRoot=False), "runAsNonRoot must be true"),
        (repair, "repair without --mode", lambda c: c.update(args=["run", "--listen", LISTEN]), "no --mode"),
        (repair, "repair file in observe mode", lambda c: c.update(args=["run", "--mode", "observe", "--listen", LISTEN]), "the file name says repair"),
        (base, "writable root", lambda c: sc(c).update(readOnlyRootFilesystem=False), "readOnlyRootFilesystem"),
        (base, "root uid", lambda c: sc(c).update(runAsUser=0), "runAsUser 0"),
        (base, "readiness on /metrics", lambda c: c["readinessProbe"]["httpGet"].update(path="/metrics"), "readinessProbe path"),
        (base, "liveness on the old port", lambda c: c["livenessProbe"]["httpGet"].update(port=9774), "livenessProbe on"),
        (base, "no startup probe", lambda c: c.pop("startupProbe"), "startupProbe: no httpGet"),
        (base, "listen on all addresses", lambda c: c.update(args=["run", "--mode", "observe", "--listen", f"0.0.0.0:{PORT}"]), "--listen 0.0.0.0"),
        (base, "sockets writable in observe", lambda c: c["volumeMounts"][0].update(readOnly=False), "must be readOnly"),
        (base, "no memory limit", lambda c: c["resources"]["limits"].pop("memory"), "limits.memory"),
        (base, "schema: port not a number", lambda c: c["ports"][0].update(containerPort="http"), "does not validate"),
        (base, "schema: unknown field", lambda c: c.update(securityContex={}), "does not validate"),
        (patch, "patch differs from the container file", lambda c: c.update(image="localhost/ribbridge:other"), "differs from"),
        (patch, "patch mounts a volume the DaemonSet lacks", lambda c: c["volumeMounts"][0].update(name="frr-socks"), "no such volume"),
        (station, "station probed on its loopback", lambda c: c["readinessProbe"]["httpGet"].update(host="127.0.0.1", port=PORT, scheme="HTTP"), "through its kube-rbac-proxy"),
        (station, "station mounts FRR's sockets", lambda c: c.update(volumeMounts=[{"name": "metrics-certs", "mountPath": SOCKETS, "readOnly": True}]), "reads no FRR"),
        (station, "station without --bmp-allow", lambda c: c.update(args=[a for i, a in enumerate(c["args"]) if a != "--bmp-allow" and (i == 0 or c["args"][i - 1] != "--bmp-allow")]), "--bmp-allow CIDR"),
        (station, "station open to all", lambda c: c["args"].extend(["--bmp-allow", "0.0.0.0/0"]), "must not accept every address"),
        (station, "station adds NET_ADMIN", lambda c: sc(c)["capabilities"].update(add=["NET_ADMIN"]), "in observe mode"),
        (base, "intent directory read-only", lambda c: c["volumeMounts"][1].update(readOnly=True), "must be writable"),
        (base, "intent directory not mounted", lambda c: c["volumeMounts"].pop(1), "intent directory is not mounted"),
        (base, "run without --drain-state", lambda c: c.update(args=["run", "--mode", "observe", "--listen", LISTEN]), "no --drain-state"),
        (base, "preStop without --drain-state", lambda c: c["lifecycle"]["preStop"]["exec"].update(command=["/usr/bin/ribbridge", "drain", "--timeout", "8s"]), "preStop"),
    ]
    failed = []
    for rel, what, breakit, words in breakages:
        broken = copy.deepcopy(files)
        breakit(ribbridge_of(broken[rel][0]))
        if not any(words in p for p in checker.run(broken)):
            failed.append(f"{rel}: {what} (no problem with {words!r})")

    def entry_breakage(what, change, words):
        broken = copy.deepcopy(files)
        doc = broken[entry][0]
        pod = yaml.safe_load(doc["contents"]["inline"])
        change(doc, pod)
        doc["contents"]["inline"] = yaml.safe_dump(pod)
        if not any(words in p for p in checker.run(broken)):
            failed.append(f"{entry}: {what} (no problem with {words!r})")

    entry_breakage("mode 0666", lambda d, p: d.update(mode=0o666), "expected 0644")
    entry_breakage("named before FRR", lambda d, p: d.update(path="/etc/kubernetes/manifests/0000-a.yaml"), "does not start after")
    entry_breakage("named after kube-vip", lambda d, p: d.update(path="/etc/kubernetes/manifests/0011-ribbridge.yaml"), "does not start after")
    entry_breakage("not hostNetwork", lambda d, p: p["spec"].pop("hostNetwork"), "hostNetwork")
    entry_breakage("not system-node-critical", lambda d, p: p["spec"].pop("priorityClassName"), "system-node-critical")
    entry_breakage("no toleration", lambda d, p: p["spec"].pop("tolerations"), "tolerations")
    entry_breakage("another hostPath", lambda d, p: p["spec"]["volumes"][0]["hostPath"].update(path="/"), "only FRR's socket directory")
    entry_breakage("container differs", lambda d, p: p["spec"]["containers"][0]["resources"]["limits"].update(memory="1Gi"), "differs from")
    entry_breakage("schema: tolerations a map", lambda d, p: p["spec"].update(tolerations={"operator": "Exists"}), "does not validate")
    entry_breakage("intent directory a Directory", lambda d, p: p["spec"]["volumes"][1]["hostPath"].update(type="Directory"), "expected hostPath")
    broken = copy.deepcopy(files)
    broken[station][0]["spec"]["template"]["spec"]["hostNetwork"] = True
    if not any("must not be hostNetwork" in p for p in checker.run(broken)):
        failed.append(f"{station}: hostNetwork (no problem with 'must not be hostNetwork')")

    def doc_breakage(rel, what, change, words):
        broken = copy.deepcopy(files)
        change(broken)
        if not any(words in p for p in checker.run(broken)):
            failed.append(f"{rel}: {what} (no problem with {words!r})")

    tmpfiles = "deploy/openshift/ribbridge-tmpfiles.yaml"
    doc_breakage(patch, "intent volume an emptyDir", lambda b: b[patch][0]["spec"]["template"]["spec"]["volumes"][0].update(hostPath=None, emptyDir={}), "expected hostPath")
    doc_breakage(tmpfiles, "tmpfiles for root", lambda b: b[tmpfiles][0]["contents"].update(inline="d /run/ribbridge 0755 0 0 -\n"), "makes /run/ribbridge for 0:0")
    doc_breakage(tmpfiles, "tmpfiles elsewhere", lambda b: b[tmpfiles][0]["contents"].update(inline="d /run/other 0755 100 101 -\n"), "expected one line")
    doc_breakage(tmpfiles, "no tmpfiles entry", lambda b: b.pop(tmpfiles), "no tmpfiles.d file entry")

    def switch_user(b, value):
        """Every repair container's --user (args and preStop) set to value."""
        for rel, docs in b.items():
            if "repair" not in os.path.basename(rel):
                continue
            for doc in docs:
                if set(doc) == {"mode", "path", "contents"}:
                    pod = yaml.safe_load(doc["contents"]["inline"])
                    for c in pod["spec"]["containers"]:
                        set_user(c, value)
                    doc["contents"]["inline"] = yaml.safe_dump(pod)
                elif ribbridge_of(doc) is not None:
                    set_user(ribbridge_of(doc), value)

    def set_user(c, value):
        for argv in (c["args"], c["lifecycle"]["preStop"]["exec"]["command"]):
            argv[argv.index("--user") + 1] = value

    # The tmpfiles owner is compared with what ribbridge runs as: --user in
    # repair (not its runAsUser 0), runAsUser:runAsGroup in observe.
    doc_breakage(tmpfiles, "repair switches to other ids", lambda b: switch_user(b, "100:102"), "runs as 100:102")
    own = "deploy/kubernetes/ribbridge-daemonset.yaml"
    pm = "deploy/kubernetes/podmonitor.yaml"
    mon = "deploy/openshift/monitoring.yaml"
    kust = KUSTOMIZATION

    def pod(b, rel):
        return [d for d in b[rel] if d.get("kind") == "DaemonSet"][0]["spec"]["template"]["spec"]

    def init(b, rel):
        return pod(b, rel)["initContainers"][0]

    def ribbridge_in(b, rel):
        return [c for c in pod(b, rel)["containers"] if c["name"] == "ribbridge"][0]

    sidecar_breakages = [
        (patch, "readiness back in a sidecar", lambda b: ribbridge_in(b, patch).update(
            readinessProbe={"httpGet": {"host": "127.0.0.1", "port": PORT, "path": "/readyz"}}), "readinessProbe in a sidecar"),
        (patch, "a sidecar's startup probe on /readyz", lambda b: ribbridge_in(b, patch)["startupProbe"]["httpGet"].update(path="/readyz"), "startupProbe path"),
        (patch, "no initContainer", lambda b: pod(b, patch).pop("initContainers"), "no initContainer ribbridge-state"),
        (own, "init adds SYS_ADMIN", lambda b: init(b, own)["securityContext"]["capabilities"]["add"].append("SYS_ADMIN"), "add [CHOWN] alone"),
        (own, "init chowns to root", lambda b: init(b, own).update(command=["chown", "0:0", STATE_DIR]), "expected chown 100:101"),
        (own, "init writable root", lambda b: init(b, own)["securityContext"].update(readOnlyRootFilesystem=False), "readOnlyRootFilesystem"),
        (pm, "PodMonitor without the node label", lambda b: b[pm][0]["spec"]["podMetricsEndpoints"][0]["relabelings"].pop(1), "into `node`"),
        (pm, "PodMonitor's job its default", lambda b: b[pm][1]["spec"]["podMetricsEndpoints"][0]["relabelings"].pop(0), "not one the rules select"),
        (pm, "PodMonitor on a port nothing has", lambda b: b[pm][0]["spec"]["podMetricsEndpoints"][0].update(port="metrics"), "no container port"),
        (mon, "ServiceMonitor without the node label", lambda b: b[mon][1]["spec"]["endpoints"][0].pop("relabelings"), "into `node`"),
        (station, "the station's job its Service's label", lambda b: b[station][3]["spec"]["endpoints"][0]["relabelings"].pop(0), "not one the rules select"),
        (own, "no version label", lambda b: [d for d in b[own] if d.get("kind") == "DaemonSet"][0]["metadata"]["labels"].pop("app.kubernetes.io/version"), "no label app.kubernetes.io/version"),
        (own, "another version", lambda b: [d for d in b[own] if d.get("kind") == "DaemonSet"][0]["spec"]["template"]["metadata"]["labels"].update({"app.kubernetes.io/version": "9.9.9"}), "Cargo.toml says"),
        (kust, "a resource that is not there", lambda b: b[kust][0]["resources"].append("gone.yaml"), "is no manifest"),
        (kust, "no kustomization", lambda b: b.pop(kust), "kustomize base"),
    ]
    for rel, what, change, words in sidecar_breakages:
        doc_breakage(rel, what, change, words)
    # the entry_breakage lines, the station's hostNetwork, the doc_breakage lines
    total = len(breakages) + 11 + 5 + len(sidecar_breakages)
    if failed:
        print(f"check-manifests --self-test: {len(failed)} of {total} breakages were NOT refused:", file=sys.stderr)
        for f in failed:
            print(f"  {f}", file=sys.stderr)
        return 1
    print(f"check-manifests --self-test: all {total} breakages refused")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--self-test", action="store_true", help="break good manifests; each must be refused")
    ap.add_argument("--kubernetes-version", default="1.33.0", help="schemas to validate against (default 1.33.0)")
    a = ap.parse_args()
    checker = Checker(a.kubernetes_version, served_paths())
    files = manifests()
    if a.self_test:
        return self_test(checker, files)
    problems = checker.run(files)
    for p in problems:
        print(f"check-manifests: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"check-manifests: {len(files)} files valid against Kubernetes {a.kubernetes_version} (strict) and posture ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
