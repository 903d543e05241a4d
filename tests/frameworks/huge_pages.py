"""Whether an address lies in memory advised for transparent huge pages (MADV_HUGEPAGE): the
"hg" flag of its mapping in /proc/self/smaps. The framework libraries advise the new outputs of 4 MiB
and more that they write, as numpy advises its own arrays."""
import os

import pytest


def advised(address):
    """True or False for the mapping holding address; skips the test where the kernel cannot say."""
    if not os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled"):
        pytest.skip("this kernel has no transparent huge pages")
    with open("/proc/self/smaps") as smaps:
        inside = False
        for line in smaps:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                begin, end = (int(part, 16) for part in head.split("-"))
                inside = begin <= address < end
            elif inside and head == "VmFlags:":
                return "hg" in line.split()[1:]
    pytest.skip(f"no mapping with VmFlags holds {address:#x}")
