#!/usr/bin/env python3
"""Writes the recorded PCI path that tests/cli/t_check_pci.sh reads: two
'lspci -xxx' style dumps of a root port with a PLX NT function below it
(tests/data/pci-dumps/check-good.txt, check-bad.txt) and two sysfs trees
beside them (tests/data/check/sysfs-good, sysfs-bad): AER counts, drivers,
IOMMU groups and BARs as the kernel shows them.

good: the link trained to what both ends support (8GT/s x8), MPS 256 on
  both, no AER error, BAR2 16 MiB prefetchable and aligned, bound to
  vfio-pci alone in IOMMU group 7.
bad: the link trained at 2.5GT/s x4, the NT function's MPS 512 over the
  root port's 256, 3 correctable errors standing on the NT function,
  BAR2 256 KiB (less than any window of the tests), and a second function
  in its IOMMU group held by e1000e.

Run from the repository root; the files are committed, this says how they
were made."""
import os
import shutil
import struct

def config(vendor, device, cls, header, status=0x0010, bars=(), bus=None,
           exp=None):
    """256 bytes of config space; exp: (port_type, devcap_mps, mps, mrrs,
    cap_speed, cap_width, sta_speed, sta_width)."""
    c = bytearray(256)
    struct.pack_into("<HHHH", c, 0, vendor, device, 0x0006, status)
    c[8] = 1                            # revision
    struct.pack_into("<I", c, 8, (cls << 16) | 1)
    c[0x0e] = header
    for off, val in bars:
        struct.pack_into("<I", c, 0x10 + off, val)
    if bus:
        prim, sec, sub, mbase, mlimit, pbase, plimit = bus
        c[0x18], c[0x19], c[0x1a] = prim, sec, sub
        struct.pack_into("<HH", c, 0x20, mbase, mlimit)
        struct.pack_into("<HH", c, 0x24, pbase, plimit)
    if exp:
        ptype, dcap, mps, mrrs, cs, cw, ss, sw = exp
        c[0x34] = 0x40
        c[0x40], c[0x41] = 0x10, 0x00
        struct.pack_into("<H", c, 0x42, 0x0002 | (ptype << 4))
        struct.pack_into("<I", c, 0x44, dcap)
        enc = {128: 0, 256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
        struct.pack_into("<H", c, 0x48, enc[mps] << 5 | enc[mrrs] << 12)
        struct.pack_into("<I", c, 0x4c, cs | cw << 4)
        struct.pack_into("<H", c, 0x52, ss | sw << 4 | 0x1000)
    return c

def dump(name, devs):
    with open(name, "w") as f:
        for bdf, title, c in devs:
            f.write("%s %s\n" % (bdf, title))
            for row in range(0, 256, 16):
                f.write("%02x: %s\n" % (row, " ".join(
                    "%02x" % b for b in c[row:row + 16])))
            f.write("\n")

def path(bad):
    host = config(0x8086, 0x0e00, 0x0600, 0x00, status=0)
    root = config(0x8086, 0x0e02, 0x0604, 0x01,
                  bus=(0, 1, 1, 0xfe80, 0xfe80, 0xe001, 0xe0f1),
                  exp=(4, 1, 256, 512, 3, 8, 3, 8))
    nt = config(0x10b5, 0x87b0, 0x0680, 0x00,
                bars=((0, 0xfe800000), (8, 0xe000000c), (12, 0)),
                exp=(0, 2, 512 if bad else 256, 512, 3, 8,
                     1 if bad else 3, 4 if bad else 8))
    return [("00:00.0", "Host bridge: Intel Corporation Xeon E5 v2 DMI2", host),
            ("00:01.0", "PCI bridge: Intel Corporation Xeon E5 v2 PCI "
             "Express Root Port 1a", root),
            ("01:00.0", "Bridge: PLX Technology, Inc. PEX PCI Express "
             "Switch NT0 Port Virtual Interface", nt)]

def put(root, rel, text):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)

def aer(kind, counts):
    names = {"correctable": ["RxErr", "BadTLP", "BadDLLP", "Rollover",
                             "Timeout", "NonFatalErr", "CorrIntErr",
                             "HeaderOF"],
             "nonfatal": ["Undefined", "DLP", "SDES", "TLP", "FCP",
                          "CmpltTO", "CmpltAbrt", "UnxCmplt", "RxOF",
                          "MalfTLP", "ECRC", "UnsupReq", "ACSViol"],
             "fatal": ["Undefined", "DLP", "SDES", "TLP", "FCP", "CmpltTO",
                       "CmpltAbrt", "UnxCmplt", "RxOF", "MalfTLP", "ECRC",
                       "UnsupReq", "ACSViol"]}[kind]
    total = {"correctable": "TOTAL_ERR_COR", "nonfatal":
             "TOTAL_ERR_NONFATAL", "fatal": "TOTAL_ERR_FATAL"}[kind]
    lines = ["%s %d" % (n, counts.get(n, 0)) for n in names]
    lines.append("%s %d" % (total, sum(counts.values())))
    return "\n".join(lines) + "\n"

def tree(root, bad):
    shutil.rmtree(root, ignore_errors=True)
    devs = "bus/pci/devices/"
    for bdf in ("0000:00:01.0", "0000:01:00.0"):
        cor = {"BadTLP": 3} if bad and bdf.endswith("01:00.0") else {}
        put(root, devs + bdf + "/aer_dev_correctable", aer("correctable", cor))
        put(root, devs + bdf + "/aer_dev_nonfatal", aer("nonfatal", {}))
        put(root, devs + bdf + "/aer_dev_fatal", aer("fatal", {}))
    size = 0x40000 if bad else 0x1000000
    res = ["0x00000000fe800000 0x00000000fe800fff 0x0000000000040200",
           "0x0000000000000000 0x0000000000000000 0x0000000000000000",
           "0x00000000e0000000 0x%016x 0x000000000014220c"
           % (0xe0000000 + size - 1)]
    res += ["0x0000000000000000 0x0000000000000000 0x0000000000000000"] * 10
    put(root, devs + "0000:01:00.0/resource", "\n".join(res) + "\n")
    os.symlink("../../../bus/pci/drivers/vfio-pci",
               os.path.join(root, devs, "0000:01:00.0/driver"))
    os.symlink("../../../bus/pci/drivers/pcieport",
               os.path.join(root, devs, "0000:00:01.0/driver"))
    os.symlink("../../../kernel/iommu_groups/7",
               os.path.join(root, devs, "0000:01:00.0/iommu_group"))
    group = "kernel/iommu_groups/7/devices/"
    members = ["0000:01:00.0"] + (["0000:01:00.1"] if bad else [])
    for m in members:
        put(root, group + m + "/.keep", "")
    if bad:
        put(root, devs + "0000:01:00.1/aer_dev_correctable",
            aer("correctable", {}))
        os.symlink("../../../bus/pci/drivers/e1000e",
                   os.path.join(root, devs, "0000:01:00.1/driver"))

dump("tests/data/pci-dumps/check-good.txt", path(False))
dump("tests/data/pci-dumps/check-bad.txt", path(True))
tree("tests/data/check/sysfs-good", False)
tree("tests/data/check/sysfs-bad", True)
