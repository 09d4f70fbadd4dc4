#!/usr/bin/env python3
"""Turn a shipped manifest's ribbridge container into the OCI runtime spec
(config.json) that kubelet -> CRI -> CRI-O (or containerd) -> runc would run.

Usage:
  oci-spec.py --manifest FILE [--container ribbridge] --image-config FILE \\
      --rootfs DIR --netns PATH [--volume NAME=HOSTPATH]... \\
      [--frr-ids UID:GID] [--without-cap CAP]... [--runtime crio|containerd] \\
      [--env NAME=VALUE]... --out DIR
  oci-spec.py --cri --manifest FILE [--container ribbridge] \\
      [--volume NAME=HOSTPATH]... [--frr-ids UID:GID] [--without-cap CAP]... \\
      [--env NAME=VALUE]... [--image REF] [--pod-uid UID] --log-dir DIR --out DIR

--cri writes what kubelet sends to a CRI runtime instead, for a real one
(netns-tests/containerd.rs: containerd's CRI plugin): DIR/pod.json (the
PodSandboxConfig), DIR/container.json (the ContainerConfig), both in the
protobuf JSON mapping that scripts/cri.py reads, and DIR/kubelet.json (what
kubelet does beside the CRI: the HTTP probes, the preStop command, the grace
period). Only a hostNetwork pod (this lab has no CNI). --image replaces the
manifest's image reference (the tests' failpoints build), --log-dir is the
pod's log directory (kubelet's /var/log/pods/...).

Writes DIR/config.json (the container, for `runc run --bundle DIR`) and
DIR/prestop.json (the OCI process object the runtime hands to
`runc exec --process` for the container's lifecycle.preStop.exec command),
and prints one line to stderr: the process's user, each capability set,
noNewPrivileges, and the sets a process has after runc's execve (a non-root
uid keeps no permitted or effective capability: Kubernetes sets no ambient
capability).

Why: podman gives a non-root user ambient capabilities, so a podman test of
a non-root container with capabilities.add passes where CRI-O and containerd
fail. This script builds what those runtimes build, from their own rules,
so a test under plain runc sees what a node would.

--manifest    a bare container (ribbridge-container*.yaml), a Pod, a
              machine-config file entry whose contents.inline holds a Pod
              (0005-*.yaml), or a workload or strategic-merge patch with
              spec.template.spec (a DaemonSet patch); the container is
              found by name.
--image-config the JSON `podman image inspect TAG` prints (a list of one
              object: .[0].Config.Entrypoint/Cmd/Env/User/WorkingDir).
--rootfs      the container's root filesystem (root.path); its /etc/passwd
              and /etc/group, if any, resolve the user as the runtimes do.
--netns       the network namespace to join: for a hostNetwork pod the
              "node's" namespace of the lab (e.g. /run/netns/rb-node1), for
              any other pod the pod's. A real runtime leaves a hostNetwork
              container in its own (the host's) namespace; a lab runs it in
              a namespace it made for the node.
--volume      NAME=HOSTPATH, the host directory each mounted volume is bound
              from (one per volume the container mounts; an error names a
              missing one). subPath is joined to it.
--frr-ids     UID:GID: the lab's FRR runs as other ids than the upstream
              image's 100:101; replaces them, and only them: every non-zero
              runAsUser / runAsGroup (container and pod) and the value after
              every `--user` in args and in the preStop command.
--without-cap removes that capability from capabilities.add (the "no
              NET_ADMIN" test case); an error if it is not there.
--env         NAME=VALUE appended to the container's env (as a patch of the
              pod would: the tests' FAILPOINTS).
--runtime     crio (default) or containerd: they differ in the default
              capability list, inheritable handling, additional gids, env
              defaults and masked paths (each rule below names its source).

Nothing else in the manifest is changed. Errors (bad input, a missing
volume, a user kubelet would refuse) print one line naming what and where,
and exit 2.

Sources read (never copied; each rule below names the file it comes from):
  CRI-O v1.36.3 (commit b24632ab):
    internal/factory/container/container.go   SpecSetupCapabilities,
        SpecSetPrivileges, SpecSetProcessArgs, SpecSetLinuxContainerResources
    internal/config/capabilities/capabilities_linux.go  Default()
    pkg/config/config.go / template.go  add_inheritable_capabilities (false
        by default since 1.24), default_ulimits (empty), default_env (empty)
    server/container_create.go  setupContainerUser, generateUserString,
        setupContainerMounts, setupContainerEnvironmentAndWorkdir,
        setupLinuxResources, setupCgroupNamespace
    server/container_create_linux.go  addOCIBindMounts, addSysfsMounts,
        addShmMount, getSpecGen
    server/masked_paths.go, vendor/go.podman.io/common/pkg/config/default.go
        the masked paths CRI-O adds to kubelet's
    server/utils.go  mergeEnvs
    internal/factory/container/namespaces_linux.go  SpecAddNamespaces
    internal/oci/runtime_oci.go  prepareProcessExec (the exec process)
    utils/utils.go  GetUserInfo (-> moby/sys/user GetExecUser)
    vendor/github.com/opencontainers/runtime-tools/generate/generate.go
        New("linux"): the base spec (mounts, env, rlimits, namespaces)
  containerd v2.3.4 (commit db880954):
    internal/cri/server/container_create.go  buildLinuxSpec, platformSpecOpts
    internal/cri/server/container_create_linux.go  containerSpecOpts
    internal/cri/opts/spec_opts.go  WithCapabilities, WithoutAmbientCaps,
        WithAdditionalGIDs, WithSupplementalGroups, WithProcessArgs
    internal/cri/opts/spec_linux_opts.go  withMounts, WithResources
    internal/cri/server/container_execsync.go  the exec process
    internal/cri/util/util.go  GenerateUserString
    pkg/oci/spec.go  populateDefaultUnixSpec, defaultUnixCaps
    pkg/oci/mounts.go  defaultMounts
    pkg/oci/spec_opts.go  WithUser, WithUserID, WithAdditionalGIDs,
        WithCapabilities, WithAddedCapabilities, WithDroppedCapabilities,
        WithEnv (replaceOrAppendEnvValues)
  kubelet (kubernetes pkg/securitycontext/util.go, a stored recent copy):
    the masked / readonly paths it sends for procMount Default, and
    AddNoNewPrivileges; cpu shares / quota from pkg/kubelet/cm
    (MilliCPUToShares, MilliCPUToQuota, period 100 ms).

Out of scope, on purpose: seccomp (RuntimeDefault is the runtime's own
profile; none is put in the spec), AppArmor and SELinux labels, the mounts
kubelet and the runtime add beside the volumes (/etc/hosts, /etc/hostname,
/etc/resolv.conf, /dev/termination-log, a service-account token, the pod's
shared /dev/shm: a private tmpfs stands in), the pod's ipc/uts namespaces
(new ones here), cgroupsPath, oomScoreAdj, pids limit, service-link env.
None of them changes a capability, a uid or a gid.

Keep the output runnable with Debian 12's runc 1.1.x (ociVersion 1.0.2).
Run it with the venv's python (PyYAML): /var/cache/ribbridge/venv/bin/python.
"""

import argparse
import glob
import json
import os
import re
import socket
import sys

try:
    import yaml
except ImportError:
    sys.exit("oci-spec: PyYAML is missing: run it with /var/cache/ribbridge/venv/bin/python")

# runc 1.1.5 (Debian 12) prints "1.0.2-dev" in `runc spec`; every field
# used here exists in runtime-spec 1.0.2.
OCI_VERSION = "1.0.2"

# Linux capability numbers (include/uapi/linux/capability.h).
CAP_NUMBERS = {
    "CAP_CHOWN": 0, "CAP_DAC_OVERRIDE": 1, "CAP_DAC_READ_SEARCH": 2, "CAP_FOWNER": 3,
    "CAP_FSETID": 4, "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7, "CAP_SETPCAP": 8,
    "CAP_LINUX_IMMUTABLE": 9, "CAP_NET_BIND_SERVICE": 10, "CAP_NET_BROADCAST": 11,
    "CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13, "CAP_IPC_LOCK": 14, "CAP_IPC_OWNER": 15,
    "CAP_SYS_MODULE": 16, "CAP_SYS_RAWIO": 17, "CAP_SYS_CHROOT": 18, "CAP_SYS_PTRACE": 19,
    "CAP_SYS_PACCT": 20, "CAP_SYS_ADMIN": 21, "CAP_SYS_BOOT": 22, "CAP_SYS_NICE": 23,
    "CAP_SYS_RESOURCE": 24, "CAP_SYS_TIME": 25, "CAP_SYS_TTY_CONFIG": 26, "CAP_MKNOD": 27,
    "CAP_LEASE": 28, "CAP_AUDIT_WRITE": 29, "CAP_AUDIT_CONTROL": 30, "CAP_SETFCAP": 31,
    "CAP_MAC_OVERRIDE": 32, "CAP_MAC_ADMIN": 33, "CAP_SYSLOG": 34, "CAP_WAKE_ALARM": 35,
    "CAP_BLOCK_SUSPEND": 36, "CAP_AUDIT_READ": 37, "CAP_PERFMON": 38, "CAP_BPF": 39,
    "CAP_CHECKPOINT_RESTORE": 40,
}

# CRI-O v1.36.3 internal/config/capabilities/capabilities_linux.go Default():
# the default_capabilities a container gets unless it drops or adds ALL.
CRIO_DEFAULT_CAPS = ["CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "SETGID", "SETUID",
                     "SETPCAP", "NET_BIND_SERVICE", "KILL"]
# CRI-O v1.36.3 pkg/config/config.go: AddInheritableCapabilities is unset
# (false) by default ("dropped in 1.24"); the default is what we model.
CRIO_ADD_INHERITABLE = False

# containerd v2.3.4 pkg/oci/spec.go defaultUnixCaps(): bounding, permitted
# and effective of the default spec (no inheritable, no ambient).
CONTAINERD_DEFAULT_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER",
                           "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID",
                           "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
                           "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]

# kubelet pkg/securitycontext/util.go: what it sends in the CRI
# securityContext (masked_paths, readonly_paths) for procMount Default.
KUBELET_MASKED = ["/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys",
                  "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                  "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
                  "/sys/devices/virtual/powercap"]
KUBELET_READONLY = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]

# CRI-O v1.36.3 vendor/go.podman.io/common/pkg/config/default.go
# getMaskedPaths() (with its glob, expanded on this host) and
# server/masked_paths.go (+ /proc/asound, /proc/interrupts): CRI-O adds
# these to kubelet's list, sorted and deduplicated.
CRIO_EXTRA_MASKED = ["/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                     "/proc/sched_debug", "/proc/scsi", "/proc/timer_list",
                     "/proc/timer_stats", "/sys/devices/virtual/powercap", "/sys/firmware",
                     "/sys/fs/selinux", "/proc/interrupts", "/proc/asound"]
CRIO_MASKED_GLOBS = ["/sys/devices/system/cpu/cpu*/thermal_throttle"]

DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# kubelet pkg/kubelet/cm helpers: the CFS period, the smallest quota and
# the smallest shares it sends.
CFS_PERIOD = 100000
MIN_QUOTA = 1000
MIN_SHARES = 2


class Bad(Exception):
    """A problem with the input: printed as one line, exit 2."""


# -- manifest --------------------------------------------------------------

def load_yaml_docs(path):
    try:
        with open(path) as f:
            return [d for d in yaml.safe_load_all(f) if d is not None]
    except OSError as e:
        raise Bad(f"{path}: cannot read: {e.strerror}")
    except yaml.YAMLError as e:
        raise Bad(f"{path}: not YAML: {str(e).splitlines()[0]}")


def find_container(path, docs, name):
    """(container, pod spec, pod metadata, where) of the container NAME."""
    for i, doc in enumerate(docs):
        where = f"{path} (document {i + 1})"
        if not isinstance(doc, dict):
            raise Bad(f"{where}: not a mapping")
        if set(doc) >= {"path", "contents"} and "kind" not in doc:
            inline = (doc.get("contents") or {}).get("inline") if isinstance(doc.get("contents"), dict) else None
            if not isinstance(inline, str):
                raise Bad(f"{where}: a file entry without contents.inline")
            try:
                pod = yaml.safe_load(inline)
            except yaml.YAMLError as e:
                raise Bad(f"{where}: contents.inline is not YAML: {str(e).splitlines()[0]}")
            if not isinstance(pod, dict) or pod.get("kind") != "Pod":
                raise Bad(f"{where}: contents.inline holds no Pod")
            found = containers_of(pod.get("spec"), pod.get("metadata"), f"{where} contents.inline", name)
        elif "kind" not in doc and "image" in doc:
            # A bare container: written for the frr-k8s static pod, which is
            # hostNetwork; its volumes come from --volume.
            if doc.get("name") == name:
                return doc, {"hostNetwork": True}, {"name": name}, where
            found = None
        elif doc.get("kind") == "Pod":
            found = containers_of(doc.get("spec"), doc.get("metadata"), where, name)
        else:
            spec = ((doc.get("spec") or {}).get("template") or {}).get("spec")
            if isinstance(spec, dict) and doc.get("kind") == "DaemonSet" and "selector" not in (doc.get("spec") or {}):
                # A strategic-merge patch of frr-k8s' or MetalLB's speaker
                # DaemonSet: the pod it lands in is hostNetwork.
                spec = dict(spec, hostNetwork=spec.get("hostNetwork", True))
            found = containers_of(spec, ((doc.get("spec") or {}).get("template") or {}).get("metadata") or doc.get("metadata"), where, name) if spec else None
        if found:
            return found
    raise Bad(f"{path}: no container named {name!r}")


def containers_of(spec, meta, where, name):
    if not isinstance(spec, dict):
        raise Bad(f"{where}: no pod spec")
    for c in spec.get("containers") or []:
        if isinstance(c, dict) and c.get("name") == name:
            return c, spec, meta or {}, where
    return None


def apply_frr_ids(c, pod, ids, where):
    """--frr-ids: every non-zero runAsUser/runAsGroup and every --user value."""
    uid, gid = ids
    for sc in (c.get("securityContext"), pod.get("securityContext")):
        if not isinstance(sc, dict):
            continue
        if isinstance(sc.get("runAsUser"), int) and sc["runAsUser"] != 0:
            sc["runAsUser"] = uid
        if isinstance(sc.get("runAsGroup"), int) and sc["runAsGroup"] != 0:
            sc["runAsGroup"] = gid

    def fix(argv):
        out = []
        after = False
        for a in argv:
            a = str(a)
            if after:
                out.append(f"{uid}:{gid}")
                after = False
            elif a == "--user":
                out.append(a)
                after = True
            elif a.startswith("--user="):
                out.append(f"--user={uid}:{gid}")
            else:
                out.append(a)
        if after:
            raise Bad(f"{where}: `--user` without a value in {argv}")
        return out

    if c.get("args") is not None:
        c["args"] = fix(c["args"])
    exe = prestop_exec(c)
    if exe is not None and exe.get("command") is not None:
        exe["command"] = fix(exe["command"])


def prestop_exec(c):
    pre = ((c.get("lifecycle") or {}).get("preStop") or {})
    return pre.get("exec") if isinstance(pre.get("exec"), dict) else None


# -- quantities (Kubernetes resource.Quantity, as far as manifests use it)

SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
          "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def quantity(value, where):
    """A quantity as an exact fraction (numerator, denominator)."""
    from fractions import Fraction
    s = str(value).strip()
    m = re.fullmatch(r"([+]?[0-9]*\.?[0-9]+)([eE][+-]?[0-9]+|m|u|n|Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?", s)
    if not m:
        raise Bad(f"{where}: {value!r} is not a Kubernetes quantity")
    num, suf = Fraction(m.group(1)), m.group(2) or ""
    if suf in SUFFIX:
        return num * SUFFIX[suf]
    if suf == "m":
        return num / 1000
    if suf == "u":
        return num / 10**6
    if suf == "n":
        return num / 10**9
    return num * Fraction(10) ** int(suf[1:])


def milli(value, where):
    import math
    return math.ceil(quantity(value, where) * 1000)


def whole(value, where):
    import math
    return math.ceil(quantity(value, where))


# -- users -------------------------------------------------------------------

def read_db(rootfs, name, fields):
    """rootfs/etc/passwd or /etc/group entries as lists, or None if absent."""
    path = os.path.join(rootfs, "etc", name)
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Bad(f"{path}: cannot read: {e.strerror}")
    out = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        parts = line.split(":")
        if len(parts) < fields:
            parts += [""] * (fields - len(parts))
        out.append(parts)
    return out


def exec_user(userstr, rootfs, where):
    """(uid, gid, supplementary gids) for a USER string "user[:group]",
    resolved in the rootfs the way GetExecUser does (CRI-O v1.36.3
    utils/utils.go GetUserInfo -> moby/sys/user): a numeric user not in
    /etc/passwd keeps gid 0; a name must be there; without a group part, the
    groups of /etc/group that list the user are its supplementary gids."""
    passwd = read_db(rootfs, "passwd", 7) or []
    groups = read_db(rootfs, "group", 4) or []
    user, _, group = userstr.partition(":")
    uid, gid, name, matched = 0, 0, None, False
    for p in passwd:
        if p[0] == user or (user.isdigit() and p[2] == user):
            try:
                uid, gid, name, matched = int(p[2]), int(p[3]), p[0], True
            except ValueError:
                continue
            break
    if not matched:
        if not user.isdigit():
            raise Bad(f"{where}: user {user!r} is not in {rootfs}/etc/passwd")
        uid = int(user)
    sgids = []
    if group:
        if group.isdigit():
            gid = int(group)
        else:
            hit = [g for g in groups if g[0] == group]
            if not hit:
                raise Bad(f"{where}: group {group!r} is not in {rootfs}/etc/group")
            gid = int(hit[0][2])
    elif matched:
        for g in groups:
            if name in g[3].split(",") and g[2].isdigit():
                sgids.append(int(g[2]))
    return uid, gid, sgids, name


def containerd_user(userstr, rootfs, where):
    """containerd v2.3.4 pkg/oci/spec_opts.go WithUser: "uid:gid" numeric
    is taken as is; a lone uid is looked up in /etc/passwd (gid 0 if
    absent, WithUserID); names must be found."""
    user, _, group = userstr.partition(":")
    if group and user.isdigit() and group.isdigit():
        return int(user), int(group)
    uid, gid, _, _ = exec_user(userstr, rootfs, where)
    return uid, gid


def containerd_sgids(userstr, rootfs, where):
    """containerd v2.3.4 pkg/oci/spec_opts.go WithAdditionalGIDs: groups of
    /etc/group listing the user's name, but not the group named like it."""
    passwd = read_db(rootfs, "passwd", 7) or []
    groups = read_db(rootfs, "group", 4)
    if groups is None:
        return []
    name = userstr
    if userstr.isdigit():
        names = [p[0] for p in passwd if p[2] == userstr]
        if not names:
            return []
        name = names[0]
    return [int(g[2]) for g in groups if g[0] != name and name in g[3].split(",") and g[2].isdigit()]


# -- the spec ----------------------------------------------------------------

def known_caps():
    """The capabilities this kernel knows (CRI-O's getOCICapabilitiesList:
    the known ones up to the last cap)."""
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap").read())
    except (OSError, ValueError):
        last = max(CAP_NUMBERS.values())
    return [c for c, n in sorted(CAP_NUMBERS.items(), key=lambda kv: kv[1]) if n <= last]


def prefixed(cap):
    cap = str(cap).upper()
    return cap if cap.startswith("CAP_") else "CAP_" + cap


def caps_crio(add, drop, where):
    """CRI-O v1.36.3 internal/factory/container/container.go
    SpecSetupCapabilities: clear every set (ambient and inheritable
    included: "Kubernetes is not yet ambient capabilities aware", CVE-2022-
    27652); add the default_capabilities unless add or drop holds ALL; ALL
    in add = every known cap, ALL in drop = none; then each add goes into
    bounding, effective and permitted (inheritable only with
    add_inheritable_capabilities), each drop out of them; an unknown
    capability is an error."""
    known = known_caps()
    add_all = any(str(a).upper() == "ALL" for a in add)
    drop_all = any(str(d).upper() == "ALL" for d in drop)
    if not add_all and not drop_all:
        add = list(add) + CRIO_DEFAULT_CAPS
    sets = {k: [] for k in ("bounding", "effective", "permitted", "inheritable", "ambient")}
    touched = ["bounding", "effective", "permitted"] + (["inheritable"] if CRIO_ADD_INHERITABLE else [])
    if add_all:
        for k in touched:
            sets[k] = list(known)
    if drop_all:
        for k in touched:
            sets[k] = []
    for a in add:
        if str(a).upper() == "ALL":
            continue
        cap = prefixed(a)
        if cap not in known:
            raise Bad(f"{where}: unknown capability {cap!r} to add (CRI-O refuses the container)")
        for k in touched:
            if cap not in sets[k]:
                sets[k].append(cap)
    for d in drop:
        if str(d).upper() == "ALL":
            continue
        cap = prefixed(d)
        for k in touched:
            sets[k] = [c for c in sets[k] if c != cap]
    return sets


def caps_containerd(caps_obj, add, drop, where):
    """containerd v2.3.4 internal/cri/opts/spec_opts.go WithCapabilities on
    pkg/oci/spec.go's default (defaultUnixCaps in bounding, permitted,
    effective): no capabilities object keeps the default; ALL in add =
    the daemon's current caps, ALL in drop = none (inheritable cleared);
    adds go to bounding/effective/permitted, drops leave those and
    inheritable; then WithoutAmbientCaps clears ambient."""
    known = known_caps()
    sets = {"bounding": list(CONTAINERD_DEFAULT_CAPS), "effective": list(CONTAINERD_DEFAULT_CAPS),
            "permitted": list(CONTAINERD_DEFAULT_CAPS), "inheritable": [], "ambient": []}
    if caps_obj is None:
        return sets
    three = ("bounding", "effective", "permitted")
    if any(str(a).upper() == "ALL" for a in add):
        for k in three:
            sets[k] = list(known)
    if any(str(d).upper() == "ALL" for d in drop):
        for k in three:
            sets[k] = []
        sets["inheritable"] = []
    for a in add:
        if str(a).upper() == "ALL":
            continue
        cap = prefixed(a)
        if cap not in CAP_NUMBERS:
            raise Bad(f"{where}: unknown capability {cap!r} to add")
        for k in three:
            if cap not in sets[k]:
                sets[k].append(cap)
    for d in drop:
        if str(d).upper() == "ALL":
            continue
        cap = prefixed(d)
        for k in three + ("inheritable",):
            sets[k] = [c for c in sets[k] if c != cap]
    return sets


def mask(caps):
    m = 0
    for c in caps:
        m |= 1 << CAP_NUMBERS[c]
    return m


def set_env(env, item):
    """Replace the variable of the same name, or append (runtime-tools
    generate addEnv / containerd replaceOrAppendEnvValues)."""
    key = item.split("=", 1)[0]
    for i, e in enumerate(env):
        if e.split("=", 1)[0] == key:
            env[i] = item
            return
    env.append(item)


def expand(s, env):
    """kubelet's $(VAR) expansion of command and args ($$ escapes)."""
    values = dict(e.split("=", 1) for e in env if "=" in e)

    def sub(m):
        if m.group(0) == "$$":
            return "$"
        return values.get(m.group(1), m.group(0))
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", sub, s)


def swap_accounting():
    """Whether the memory cgroup accounts swap (CRI-O's
    node.CgroupHasMemorySwap, containerd's SwapControllerAvailable)."""
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        return bool(glob.glob("/sys/fs/cgroup/*/memory.swap.max"))
    return os.path.exists("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes")


class Container:
    """A manifest's container as kubelet reads it: the container, its pod,
    the place it was found, the effective security context's parts."""


def read_container(a):
    """The container of --manifest, checked, with --frr-ids, --without-cap
    and --env applied: what both the OCI spec and the CRI configs start from."""
    docs = load_yaml_docs(a.manifest)
    c, pod, meta, where = find_container(a.manifest, docs, a.container)
    where = f"{where}: container {a.container}"
    for key in ("securityContext", "resources", "lifecycle"):
        if c.get(key) is not None and not isinstance(c.get(key), dict):
            raise Bad(f"{where}: {key} is not a mapping")
    for key in ("command", "args", "env", "volumeMounts"):
        if c.get(key) is not None and not isinstance(c.get(key), list):
            raise Bad(f"{where}: {key} is not a list")
    exe = prestop_exec(c)
    if exe is not None and exe.get("command") is not None and not isinstance(exe.get("command"), list):
        raise Bad(f"{where}: lifecycle.preStop.exec.command is not a list")
    if a.frr_ids:
        apply_frr_ids(c, pod, a.frr_ids, where)
    if a.env:
        c["env"] = list(c.get("env") or []) + [{"name": k, "value": v} for k, v in a.env]
    sc = c.get("securityContext") or {}
    psc = pod.get("securityContext") or {}
    if not isinstance(psc, dict):
        raise Bad(f"{where}: the pod's securityContext is not a mapping")
    caps_obj = sc.get("capabilities")
    if caps_obj is not None and not isinstance(caps_obj, dict):
        raise Bad(f"{where}: securityContext.capabilities is not a mapping")
    add = list((caps_obj or {}).get("add") or [])
    drop = list((caps_obj or {}).get("drop") or [])
    for cap in a.without_cap:
        left = [x for x in add if prefixed(x) != prefixed(cap)]
        if len(left) == len(add):
            raise Bad(f"{where}: --without-cap {cap}: capabilities.add {add} does not hold it")
        add = left
    if sc.get("privileged") is True:
        raise Bad(f"{where}: privileged: a privileged container gets every capability; out of scope here")
    k = Container()
    k.c, k.pod, k.meta, k.where, k.sc, k.psc = c, pod, meta, where, sc, psc
    k.caps_obj, k.add, k.drop = caps_obj, add, drop

    # kubelet: the effective security context, container over pod.
    def eff(key):
        return sc.get(key) if sc.get(key) is not None else psc.get(key)
    k.eff = eff
    k.run_as_user, k.run_as_group, k.non_root = eff("runAsUser"), eff("runAsGroup"), eff("runAsNonRoot")
    for key, v in (("runAsUser", k.run_as_user), ("runAsGroup", k.run_as_group)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise Bad(f"{where}: {key} {v!r} is not a uid/gid")
    k.supplemental = list(psc.get("supplementalGroups") or [])
    if psc.get("fsGroup") is not None:
        # kubelet adds the pod's fsGroup to the supplemental groups.
        k.supplemental.append(psc["fsGroup"])
    k.env = kube_env(c, where)
    return k


def kube_env(c, where):
    """The container's env as NAME=VALUE (no valueFrom outside a cluster)."""
    out = []
    for e in c.get("env") or []:
        if not isinstance(e, dict) or "name" not in e:
            raise Bad(f"{where}: env entry {e!r} has no name")
        if "valueFrom" in e:
            raise Bad(f"{where}: env {e['name']}: valueFrom cannot be resolved outside a cluster")
        out.append(f"{e['name']}={e.get('value', '')}")
    return out


def build(a):
    k = read_container(a)
    c, pod, meta, where, sc, psc = k.c, k.pod, k.meta, k.where, k.sc, k.psc
    caps_obj, add, drop = k.caps_obj, k.add, k.drop
    run_as_user, run_as_group, non_root = k.run_as_user, k.run_as_group, k.non_root
    supplemental = k.supplemental

    image = load_image_config(a.image_config)

    policy = psc.get("supplementalGroupsPolicy", "Merge")

    image_user = str(image.get("User") or "")
    # CRI-O v1.36.3 server/container_create.go generateUserString: runAsUser,
    # else the image's USER (whole); runAsGroup overrides the gid after.
    if a.runtime == "crio":
        userstr = str(run_as_user) if run_as_user is not None else image_user
        uid, gid, sgids, _ = exec_user(userstr or "0", a.rootfs, where)
        if run_as_group is not None:
            gid = run_as_group
        # setupContainerUser: the primary gid first, then (policy Merge) the
        # /etc/group ones, then supplementalGroups; no duplicates, in order.
        gids = []
        for g in [gid] + (sgids if policy == "Merge" else []) + supplemental:
            if g not in gids:
                gids.append(g)
    else:
        # containerd v2.3.4 internal/cri/util/util.go GenerateUserString
        # ("uid[:gid]") and container_create.go platformSpecOpts: else the
        # image's USER; container_create_linux.go containerSpecOpts:
        # additional gids from /etc/group for the user part, then
        # supplementalGroups, merged sorted (spec_opts.go mergeGids).
        if run_as_group is not None and run_as_user is None:
            raise Bad(f"{where}: runAsGroup without runAsUser")
        if run_as_user is not None:
            userstr = f"{run_as_user}:{run_as_group}" if run_as_group is not None else str(run_as_user)
        else:
            userstr = image_user
        uid, gid = containerd_user(userstr or "0", a.rootfs, where)
        add_user = str(run_as_user) if run_as_user is not None else (image_user.split(":")[0] or "0")
        extra = containerd_sgids(add_user, a.rootfs, where) if policy == "Merge" else []
        gids = sorted(set([gid] + extra + supplemental))
    # kubelet (kuberuntime verifyRunAsNonRoot) refuses to start a container
    # with runAsNonRoot true that would run as uid 0.
    if non_root is True and uid == 0:
        raise Bad(f"{where}: runAsNonRoot is true but the container would run as uid 0: kubelet refuses to start it")

    # env. CRI-O: runtime-tools' base env (PATH, TERM), HOSTNAME, then
    # server/utils.go mergeEnvs (the container's env, then the image's not
    # overridden). containerd: buildLinuxSpec: default PATH, HOSTNAME, the
    # image's env, then the container's (replace or append).
    hostname = socket.gethostname() if pod.get("hostNetwork") else str(meta.get("name") or a.container)
    kube_env = k.env
    image_env = [str(x) for x in image.get("Env") or []]
    if a.runtime == "crio":
        env = [DEFAULT_PATH, "TERM=xterm"]
        set_env(env, f"HOSTNAME={hostname}")
        keys = {x.split("=", 1)[0] for x in kube_env}
        for x in kube_env + [i for i in image_env if "=" in i and i.split("=", 1)[0] not in keys]:
            set_env(env, x)
    else:
        env = [DEFAULT_PATH]
        for x in [f"HOSTNAME={hostname}"] + image_env + kube_env:
            set_env(env, x)

    # process.args: Kubernetes' command replaces the Entrypoint, args the
    # Cmd (CRI-O container.go SpecSetProcessArgs; containerd
    # internal/cri/opts/spec_opts.go WithProcessArgs), after kubelet's
    # $(VAR) expansion.
    command = [expand(str(x), env) for x in c.get("command") or []]
    args = [expand(str(x), env) for x in c.get("args") or []]
    if not command:
        if not args:
            args = [str(x) for x in image.get("Cmd") or []]
        entry = [str(x) for x in image.get("Entrypoint") or []]
        if a.runtime == "containerd" and entry == [""]:
            entry = []
        command = entry
    argv = command + args
    if not argv:
        raise Bad(f"{where}: no command: neither the container nor the image gives one")

    sets = caps_crio(add, drop, where) if a.runtime == "crio" else caps_containerd(caps_obj, add, drop, where)

    process = {
        "terminal": False,
        "user": {"uid": uid, "gid": gid, "additionalGids": gids},
        "args": argv,
        "env": env,
        "cwd": str(c.get("workingDir") or image.get("WorkingDir") or "/"),
        "capabilities": sets,
        # CRI-O clears the rlimits and adds its default_ulimits (none by
        # default: the container inherits the daemon's); containerd's CRI
        # drops the default too (WithoutDefaultSecuritySettings). A fixed
        # RLIMIT_NOFILE keeps the lab's runs alike.
        "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
        # kubelet AddNoNewPrivileges: true only when allowPrivilegeEscalation
        # is explicitly false; both runtimes copy it (CRI-O
        # SpecSetPrivileges, containerd WithNoNewPrivileges).
        "noNewPrivileges": sc.get("allowPrivilegeEscalation") is False,
    }

    spec = {
        "ociVersion": OCI_VERSION,
        "process": process,
        # CRI-O getSpecGen SetRootReadonly(readonlyRootfs); containerd
        # WithRootFSReadonly.
        "root": {"path": os.path.abspath(a.rootfs), "readonly": sc.get("readOnlyRootFilesystem") is True},
        "hostname": hostname,
        "mounts": mounts(c, pod, a, where),
        "linux": linux(c, a, where),
    }
    prestop = None
    exe = prestop_exec(c)
    if exe is not None and exe.get("command"):
        # CRI-O v1.36.3 internal/oci/runtime_oci.go prepareProcessExec: a
        # copy of the container's process with the hook's args, no
        # terminal; containerd container_execsync.go does the same.
        prestop = json.loads(json.dumps(process))
        prestop["args"] = [str(x) for x in exe["command"]]
        prestop["terminal"] = False
    return spec, prestop


def load_image_config(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise Bad(f"{path}: cannot read: {e.strerror}")
    except json.JSONDecodeError as e:
        raise Bad(f"{path}: not JSON: {e}")
    if isinstance(data, list):
        if len(data) != 1:
            raise Bad(f"{path}: expected `podman image inspect` output for one image, got {len(data)}")
        data = data[0]
    if not isinstance(data, dict) or not isinstance(data.get("Config"), dict):
        raise Bad(f"{path}: no .Config object (expected `podman image inspect TAG` output)")
    return data["Config"]


def volume_source(m, a, where):
    """(volume name, host path) of a volumeMount: its --volume, subPath
    joined."""
    if not isinstance(m, dict) or not m.get("name") or not m.get("mountPath"):
        raise Bad(f"{where}: volumeMount {m!r} needs a name and a mountPath")
    name = m["name"]
    if name not in a.volumes:
        raise Bad(f"{where}: volume {name!r} (mounted at {m['mountPath']}) has no --volume {name}=HOSTPATH")
    src = a.volumes[name]
    if m.get("subPath"):
        src = os.path.join(src, str(m["subPath"]))
    return name, src


def mounts(c, pod, a, where):
    """The runtime's base mounts, then the volumes as bind mounts."""
    vol_mounts = c.get("volumeMounts") or []
    dests = set()
    binds = []
    for m in vol_mounts:
        name, src = volume_source(m, a, where)
        dst = os.path.normpath(str(m["mountPath"]))
        # CRI-O addOCIBindMounts / containerd withMounts: rbind, then the
        # propagation kubelet asks for (None -> private), then ro or rw;
        # CRI-O setupContainerMounts appends "bind" and sets type bind.
        prop = {None: "rprivate", "None": "rprivate", "HostToContainer": "rslave",
                "Bidirectional": "rshared"}.get(m.get("mountPropagation"))
        if prop is None:
            raise Bad(f"{where}: volumeMount {name}: mountPropagation {m.get('mountPropagation')!r}")
        opts = ["rbind", prop, "ro" if m.get("readOnly") is True else "rw"]
        if a.runtime == "crio":
            opts.append("bind")
        binds.append({"destination": dst, "type": "bind", "source": os.path.abspath(src), "options": opts})
        dests.add(dst)
    # Both runtimes sort the volume mounts by the number of parts in the
    # destination so that a parent is mounted before its children.
    binds.sort(key=lambda b: b["destination"].count("/"))

    # runtime-tools generate.New("linux") (CRI-O) / containerd
    # pkg/oci/mounts.go defaultMounts (its /run dropped by the CRI's
    # WithoutRunMount): the same /proc, /dev, /dev/pts, /dev/shm,
    # /dev/mqueue, /sys (read-only).
    base = [
        {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
        {"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
        {"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
        {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
        # CRI-O addOCIBindMounts/addSysfsMounts, containerd withMounts: the
        # cgroup filesystem, read-only.
        {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]},
    ]
    # Both drop a base mount a volume replaces (and /dev/* under a /dev volume).
    base = [b for b in base if b["destination"] not in dests
            and not ("/dev" in dests and b["destination"].startswith("/dev/"))
            and not ("/sys" in dests and b["destination"].startswith("/sys/"))]
    return base + binds


def kube_resources(c, where):
    """kubelet (kuberuntime calculateLinuxResources): shares from the cpu
    request (or the limit when there is no request), quota from the limit
    with a 100 ms period; memory limit in bytes. Keys: shares, quota,
    period, memory (each only when the manifest gives it)."""
    res = c.get("resources") or {}
    limits, requests = res.get("limits") or {}, res.get("requests") or {}
    out = {}
    req = requests.get("cpu", limits.get("cpu"))
    if req is not None:
        shares = milli(req, f"{where}: resources cpu") * 1024 // 1000
        out["shares"] = max(shares, MIN_SHARES)
    if limits.get("cpu") is not None:
        quota = milli(limits["cpu"], f"{where}: resources.limits.cpu") * CFS_PERIOD // 1000
        out["quota"] = max(quota, MIN_QUOTA)
        out["period"] = CFS_PERIOD
    if limits.get("memory") is not None:
        out["memory"] = whole(limits["memory"], f"{where}: resources.limits.memory")
    return out


def linux(c, a, where):
    resources = {"devices": [{"allow": False, "access": "rwm"}]}
    # CRI-O SpecSetLinuxContainerResources / containerd WithResources copy
    # kubelet's and set swap = the memory limit where the cgroup accounts swap.
    r = kube_resources(c, where)
    cpu = {key: r[key] for key in ("shares", "quota", "period") if key in r}
    if cpu:
        resources["cpu"] = cpu
    if "memory" in r:
        resources["memory"] = {"limit": r["memory"]}
        if swap_accounting():
            resources["memory"]["swap"] = r["memory"]
    # runtime-tools / containerd default namespaces: pid, ipc, uts, mount
    # new; the network one is --netns (CRI-O SpecAddNamespaces joins the
    # sandbox's, or none for hostNetwork). A cgroup namespace on cgroup v2
    # for a non-privileged container (CRI-O setupCgroupNamespace,
    # containerd buildLinuxSpec).
    ns = [{"type": "pid"}, {"type": "network", "path": a.netns}, {"type": "ipc"},
          {"type": "uts"}, {"type": "mount"}]
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        ns.append({"type": "cgroup"})
    if a.runtime == "crio":
        # CRI-O setupLinuxResources: kubelet's masked paths plus its own,
        # sorted, without duplicates; kubelet's readonly paths.
        extra = list(CRIO_EXTRA_MASKED)
        for g in CRIO_MASKED_GLOBS:
            extra += sorted(glob.glob(g))
        masked = sorted(set(KUBELET_MASKED + extra))
    else:
        # containerd buildLinuxSpec: its defaults emptied, kubelet's lists.
        masked = list(KUBELET_MASKED)
    return {"resources": resources, "namespaces": ns, "maskedPaths": masked,
            "readonlyPaths": list(KUBELET_READONLY)}


# -- the CRI configs (--cri) ----------------------------------------------

# CRI v1 enums, by their protobuf JSON names (k8s.io/cri-api runtime/v1).
PROPAGATION = {None: "PROPAGATION_PRIVATE", "None": "PROPAGATION_PRIVATE",
               "HostToContainer": "PROPAGATION_HOST_TO_CONTAINER",
               "Bidirectional": "PROPAGATION_BIDIRECTIONAL"}
# kubelet pkg/kubelet/qos policy.go: a critical pod (a static pod of
# system-node-critical priority) gets the guaranteed score.
CRITICAL_OOM_SCORE_ADJ = -997


def cri_seccomp(k):
    """kubelet's seccomp for the CRI (kuberuntime helpers): the container's
    seccompProfile over the pod's; none is Unconfined (kubelet without
    --seccomp-default)."""
    prof = k.eff("seccompProfile") or {}
    kind = prof.get("type") if isinstance(prof, dict) else None
    if kind in (None, "Unconfined"):
        return {"profileType": "Unconfined"}
    if kind == "RuntimeDefault":
        return {"profileType": "RuntimeDefault"}
    if kind == "Localhost":
        return {"profileType": "Localhost", "localhostRef": str(prof.get("localhostProfile") or "")}
    raise Bad(f"{k.where}: seccompProfile type {kind!r}")


def build_cri(a):
    """The PodSandboxConfig and ContainerConfig kubelet sends to the runtime
    for the manifest's pod and container (kubelet pkg/kubelet/kuberuntime:
    kuberuntime_sandbox.go generatePodSandboxConfig,
    kuberuntime_container.go generateContainerConfig,
    kuberuntime_container_linux.go generateLinuxContainerConfig,
    security_context.go determineEffectiveSecurityContext), and what
    kubelet itself does beside the CRI (probes, the preStop command)."""
    k = read_container(a)
    c, pod, meta, where = k.c, k.pod, k.meta, k.where
    if not pod.get("hostNetwork"):
        raise Bad(f"{where}: not a hostNetwork pod: this lab has no CNI for a pod network")
    name = str(meta.get("name") or a.container)
    namespace = str(meta.get("namespace") or "default")
    uid = a.pod_uid
    nsopts = {"network": "NODE", "pid": "CONTAINER", "ipc": "POD"}
    labels = {"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": namespace,
              "io.kubernetes.pod.uid": uid}
    ports = []
    for port in c.get("ports") or []:
        # A hostNetwork pod's hostPort is its containerPort.
        ports.append({"protocol": str(port.get("protocol") or "TCP"),
                      "containerPort": int(port["containerPort"]),
                      "hostPort": int(port["containerPort"])})
    seccomp = cri_seccomp(k)
    sandbox_sc = {"namespaceOptions": nsopts, "seccomp": seccomp}
    psc = k.psc
    for key, field in (("runAsUser", "runAsUser"), ("runAsGroup", "runAsGroup")):
        if isinstance(psc.get(key), int):
            sandbox_sc[field] = {"value": psc[key]}
    if k.supplemental:
        sandbox_sc["supplementalGroups"] = k.supplemental
    sandbox = {
        "metadata": {"name": name, "uid": uid, "namespace": namespace, "attempt": 0},
        # kubelet sets no hostname for a hostNetwork pod (the node's).
        "logDirectory": os.path.abspath(a.log_dir),
        "portMappings": ports,
        "labels": dict((meta.get("labels") or {}), **labels),
        "annotations": {str(x): str(y) for x, y in (meta.get("annotations") or {}).items()},
        "linux": {"securityContext": sandbox_sc},
    }

    env = list(k.env)
    mounts = []
    for m in c.get("volumeMounts") or []:
        vol, src = volume_source(m, a, where)
        prop = PROPAGATION.get(m.get("mountPropagation"))
        if prop is None:
            raise Bad(f"{where}: volumeMount {vol}: mountPropagation {m.get('mountPropagation')!r}")
        mounts.append({"containerPath": str(m["mountPath"]), "hostPath": os.path.abspath(src),
                       "readonly": m.get("readOnly") is True, "propagation": prop})
    r = kube_resources(c, where)
    resources = {"oomScoreAdj": CRITICAL_OOM_SCORE_ADJ}
    for key, field in (("shares", "cpuShares"), ("quota", "cpuQuota"), ("period", "cpuPeriod"),
                       ("memory", "memoryLimitInBytes")):
        if key in r:
            resources[field] = r[key]
    sc = k.sc
    ctr_sc = {
        # kubelet passes the names as written; the runtime adds CAP_.
        "capabilities": {"addCapabilities": [str(x) for x in k.add],
                         "dropCapabilities": [str(x) for x in k.drop]},
        "privileged": False,
        "namespaceOptions": nsopts,
        "readonlyRootfs": sc.get("readOnlyRootFilesystem") is True,
        # AddNoNewPrivileges: only allowPrivilegeEscalation false.
        "noNewPrivs": sc.get("allowPrivilegeEscalation") is False,
        # procMount Default: kubelet's lists.
        "maskedPaths": list(KUBELET_MASKED),
        "readonlyPaths": list(KUBELET_READONLY),
        "seccomp": seccomp,
    }
    if k.run_as_user is not None:
        ctr_sc["runAsUser"] = {"value": k.run_as_user}
    if k.run_as_group is not None:
        ctr_sc["runAsGroup"] = {"value": k.run_as_group}
    if k.supplemental:
        ctr_sc["supplementalGroups"] = k.supplemental
    container = {
        "metadata": {"name": a.container, "attempt": 0},
        "image": {"image": a.image or str(c.get("image") or "")},
        # kubelet expands $(VAR) in command and args with the container's
        # env; the runtime joins them with the image's entrypoint and cmd.
        "command": [expand(str(x), env) for x in c.get("command") or []],
        "args": [expand(str(x), env) for x in c.get("args") or []],
        "workingDir": str(c.get("workingDir") or ""),
        "envs": [{"key": e.split("=", 1)[0], "value": e.split("=", 1)[1]} for e in env],
        "mounts": mounts,
        "labels": dict(labels, **{"io.kubernetes.container.name": a.container}),
        "annotations": {"io.kubernetes.container.restartCount": "0",
                        "io.kubernetes.container.terminationMessagePolicy":
                            str(c.get("terminationMessagePolicy") or "File")},
        "logPath": f"{a.container}/0.log",
        "linux": {"resources": resources, "securityContext": ctr_sc},
    }
    if not container["image"]["image"]:
        raise Bad(f"{where}: no image (and no --image)")

    # What kubelet does beside the CRI: its HTTP probes from the node's
    # network namespace (a hostNetwork pod's), the preStop hook as ExecSync.
    named = {str(p.get("name")): int(p["containerPort"]) for p in c.get("ports") or [] if p.get("name")}
    probes = []
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = ((c.get(kind) or {}).get("httpGet"))
        if not isinstance(get, dict):
            continue
        port = get.get("port")
        port = named.get(str(port)) if not isinstance(port, int) else port
        if port is None:
            raise Bad(f"{where}: {kind}: port {get.get('port')!r} is not a container port")
        probes.append({"probe": kind, "host": str(get.get("host") or "127.0.0.1"), "port": port,
                       "path": str(get.get("path") or "/"), "scheme": str(get.get("scheme") or "HTTP")})
    exe = prestop_exec(c)
    kubelet = {"probes": probes,
               "preStop": [str(x) for x in exe["command"]] if exe and exe.get("command") else None,
               "terminationGracePeriodSeconds": int(pod.get("terminationGracePeriodSeconds", 30))}
    return sandbox, container, kubelet


def cri_summary(container):
    sc = container["linux"]["securityContext"]
    user = sc.get("runAsUser", {}).get("value")
    return (f"oci-spec: cri: image={container['image']['image']} runAsUser={user} "
            f"add={sc['capabilities']['addCapabilities']} drop={sc['capabilities']['dropCapabilities']} "
            f"seccomp={sc['seccomp']['profileType']} readonlyRootfs={str(sc['readonlyRootfs']).lower()} "
            f"noNewPrivs={str(sc['noNewPrivs']).lower()} mounts={[m['containerPath'] for m in container['mounts']]}")


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="oci-spec.py", description=__doc__.split("\n", 1)[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--container", default="ribbridge")
    ap.add_argument("--cri", action="store_true")
    ap.add_argument("--image-config")
    ap.add_argument("--rootfs")
    ap.add_argument("--netns")
    ap.add_argument("--image")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--log-dir")
    ap.add_argument("--pod-uid", default="00000000-0000-0000-0000-00000000c0de")
    ap.add_argument("--volume", action="append", default=[], metavar="NAME=HOSTPATH")
    ap.add_argument("--frr-ids", metavar="UID:GID")
    ap.add_argument("--without-cap", action="append", default=[], metavar="CAP")
    ap.add_argument("--runtime", choices=["crio", "containerd"], default="crio")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    vols = {}
    for v in a.volume:
        name, sep, path = v.partition("=")
        if not sep or not name or not path:
            raise Bad(f"--volume {v!r}: expected NAME=HOSTPATH")
        if not os.path.isdir(path):
            raise Bad(f"--volume {v}: {path} is not a directory")
        vols[name] = path
    a.volumes = vols
    if a.frr_ids is not None:
        m = re.fullmatch(r"([0-9]+):([0-9]+)", a.frr_ids)
        if not m or int(m.group(1)) == 0 or int(m.group(2)) == 0:
            raise Bad(f"--frr-ids {a.frr_ids!r}: expected UID:GID, both non-zero integers")
        a.frr_ids = (int(m.group(1)), int(m.group(2)))
    env = []
    for v in a.env:
        name, sep, value = v.partition("=")
        if not sep or not name:
            raise Bad(f"--env {v!r}: expected NAME=VALUE")
        env.append((name, value))
    a.env = env
    if a.cri:
        for flag, value in (("--image-config", a.image_config), ("--rootfs", a.rootfs), ("--netns", a.netns)):
            if value is not None:
                raise Bad(f"{flag}: not with --cri (the runtime reads the image and makes the namespaces)")
        if not a.log_dir:
            raise Bad("--cri needs --log-dir (the pod's log directory)")
        return a
    for flag, value in (("--image-config", a.image_config), ("--rootfs", a.rootfs), ("--netns", a.netns)):
        if value is None:
            raise Bad(f"{flag} is required (without --cri)")
    for flag, value in (("--image", a.image), ("--log-dir", a.log_dir)):
        if value is not None:
            raise Bad(f"{flag}: only with --cri")
    if not os.path.isdir(a.rootfs):
        raise Bad(f"--rootfs {a.rootfs}: not a directory")
    if not os.path.exists(a.netns):
        raise Bad(f"--netns {a.netns}: no such file (make it with `ip netns add`)")
    for cap in a.without_cap:
        if prefixed(cap) not in CAP_NUMBERS:
            raise Bad(f"--without-cap {cap!r}: not a capability")
    return a


def summary(runtime, spec):
    p = spec["process"]
    caps = p["capabilities"]
    u = p["user"]
    parts = [f"oci-spec: {runtime}: uid={u['uid']} gid={u['gid']} additionalGids={u['additionalGids']}"]
    for k in ("bounding", "effective", "permitted", "inheritable", "ambient"):
        parts.append(f"{k}=[{','.join(c[4:] for c in caps[k])}]")
    parts.append(f"noNewPrivileges={str(p['noNewPrivileges']).lower()}")
    # What /proc/self/status shows after runc's execve of a binary with no
    # file capabilities: uid 0 gets permitted = effective = bounding |
    # inheritable; any other uid keeps only its ambient set.
    bnd, inh, amb = mask(caps["bounding"]), mask(caps["inheritable"]), mask(caps["ambient"])
    prm = (bnd | inh) if u["uid"] == 0 else amb
    parts.append(f"after-exec: CapInh={inh:016x} CapPrm={prm:016x} CapEff={prm:016x} CapBnd={bnd:016x} CapAmb={amb:016x}")
    return " ".join(parts)


def main(argv):
    try:
        a = parse_args(argv)
        if a.cri:
            sandbox, container, kubelet = build_cri(a)
            os.makedirs(a.out, exist_ok=True)
            for file, doc in (("pod.json", sandbox), ("container.json", container), ("kubelet.json", kubelet)):
                with open(os.path.join(a.out, file), "w") as f:
                    json.dump(doc, f, indent=2)
                    f.write("\n")
            print(cri_summary(container), file=sys.stderr)
            return 0
        spec, prestop = build(a)
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "config.json"), "w") as f:
            json.dump(spec, f, indent=2)
            f.write("\n")
        pre = os.path.join(a.out, "prestop.json")
        if prestop is not None:
            with open(pre, "w") as f:
                json.dump(prestop, f, indent=2)
                f.write("\n")
        elif os.path.exists(pre):
            os.remove(pre)
    except Bad as e:
        print(f"oci-spec: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"oci-spec: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 2
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        # A shape of manifest this script cannot walk.
        print(f"oci-spec: {a.manifest if 'a' in locals() else ''}: malformed input ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    print(summary(a.runtime, spec), file=sys.stderr)
    if prestop is None:
        print("oci-spec: the container has no preStop exec command: no prestop.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
