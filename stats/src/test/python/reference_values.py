#!/usr/bin/env python3
"""Independent reference values for the stats module's tests (ConfidenceTest, WilsonTest, PassAtKTest, McNemarTest,
PairedDifferenceTest, KrippendorffAlphaTest).

Computed outside Java, with SciPy and mpmath (50 significant digits), from the formulas of
docs/execution.md ("Statistics"); the tests hard-code what this prints. Run: python3 reference_values.py
(tested with Python 3.11, SciPy 1.17.1, mpmath 1.3.0).
"""
from fractions import Fraction
from math import comb

import mpmath as mp
from scipy.stats import binom, norm

mp.mp.dps = 50


def z_of(level):
    # The two-sided quantile at the exact decimal level, in 50 digits, and SciPy's double.
    exact = mp.sqrt(2) * mp.erfinv(mp.mpf(level))
    return exact, norm.isf((1 - float(level)) / 2)


def wilson(x, n, z):
    x, n, z = mp.mpf(x), mp.mpf(n), mp.mpf(z)
    p = x / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * mp.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    low = mp.mpf(0) if x == 0 else max(mp.mpf(0), c - h)  # exactly 0: c - h is 0 up to the working precision
    return p, mp.sqrt(p * (1 - p) / n), low, min(mp.mpf(1), c + h)


def pass_at_k(n, c, k):
    # Chen et al.'s definition, in exact rationals.
    return Fraction(1) if n - c < k else 1 - Fraction(comb(n - c, k), comb(n, k))


def mcnemar_exact(b, c):
    m = b + c
    if m == 0:
        return Fraction(1)
    return min(Fraction(1), 2 * Fraction(sum(comb(m, i) for i in range(min(b, c) + 1)), 2 ** m))


def newcombe(a, b, c, d, z):
    # a both, b A only, c B only, d neither; difference B - A. Newcombe 1998 method 10.
    a, b, c, d = (mp.mpf(v) for v in (a, b, c, d))
    n = a + b + c + d
    _, _, lB, uB = wilson(a + c, n, z)
    _, _, lA, uA = wilson(a + b, n, z)
    pB, pA = (a + c) / n, (a + b) / n
    den = (a + c) * (b + d) * (a + b) * (c + d)
    cross = a * d - b * c
    if den == 0:
        phi = mp.mpf(0)
    else:
        num = cross - n / 2 if cross > n / 2 else (mp.mpf(0) if cross >= 0 else cross)
        phi = num / mp.sqrt(den)
    diff = pB - pA
    low = diff - mp.sqrt((pB - lB) ** 2 - 2 * phi * (pB - lB) * (uA - pA) + (uA - pA) ** 2)
    high = diff + mp.sqrt((pA - lA) ** 2 - 2 * phi * (pA - lA) * (uB - pB) + (uB - pB) ** 2)
    return diff, low, high


def s(v, digits=17):
    return mp.nstr(mp.mpf(v), digits, min_fixed=-5, max_fixed=5)


print("// z: level, z (mpmath, exact decimal level), z (SciPy double)")
for level in ["0.5", "0.8", "0.9", "0.95", "0.99", "0.999"]:
    exact, sp = z_of(level)
    print(f"{{{level}, {s(exact)}, {float(sp)!r}}},")

z95 = z_of("0.95")[0]
print("// Wilson at 0.95: x, n, rate, stderr, low, high")
for x, n in [(0, 1), (1, 1), (0, 10), (10, 10), (7, 10), (1, 2), (50, 100), (999, 1000), (1, 1000000), (81, 100),
             (9, 10)]:
    p, se, lo, hi = wilson(x, n, z95)
    print(f"{{{x}, {n}, {s(p)}, {s(se)}, {s(lo)}, {s(hi)}}},")
for level in ["0.5", "0.999"]:
    zl = z_of(level)[0]
    print(f"// Wilson at {level}: x, n, low, high")
    for x, n in [(7, 10), (0, 3), (3, 3)]:
        _, _, lo, hi = wilson(x, n, zl)
        print(f"{{{x}, {n}, {s(lo)}, {s(hi)}}},")

print("// McNemar: b, c, p (exact rational for b + c <= 5000, else SciPy's binomial cdf)")
for b, c in [(0, 0), (0, 1), (1, 5), (0, 10), (10, 11), (5, 20), (1000, 1200), (1200, 1000)]:
    print(f"{{{b}, {c}, {s(mcnemar_exact(b, c).numerator / mp.mpf(mcnemar_exact(b, c).denominator))}}},")
for b, c in [(1500000, 1502000), (1000000, 1003000), (1000000, 1010000)]:
    print(f"{{{b}, {c}, {float(2 * binom.cdf(min(b, c), b + c, 0.5))!r}}},  // SciPy")

print("// pass@k spot values: n, c, k, pass@k, pass^k")
for n, c, k in [(5, 2, 2), (10, 3, 1), (10, 3, 5), (10, 0, 3), (10, 10, 3), (100, 1, 1), (100, 50, 10), (20, 15, 6)]:
    pk = pass_at_k(n, c, k)
    ph = Fraction(comb(c, k), comb(n, k))
    print(f"{{{n}, {c}, {k}, {s(mp.mpf(pk.numerator) / pk.denominator)}, {s(mp.mpf(ph.numerator) / ph.denominator)}}},")

print("// Newcombe method 10 at 0.95: both, aOnly, bOnly, neither, difference, low, high")
for t in [(59, 6, 16, 80), (1, 1, 7, 12), (36, 12, 2, 0), (10, 0, 0, 0), (5, 0, 0, 5), (0, 3, 0, 0), (20, 30, 25, 25),
          (1000, 1000, 1200, 7000)]:
    diff, lo, hi = newcombe(*t, z95)
    print(f"{{{', '.join(map(str, t))}, {s(diff)}, {s(lo)}, {s(hi)}}},")


def krippendorff_interval(table):
    # Krippendorff's definition in exact rationals: units are columns, None is a missing judgement.
    units = [[row[u] for row in table if row[u] is not None] for u in range(len(table[0]))]
    units = [u for u in units if len(u) > 1]
    values = [v for u in units for v in u]
    n = len(values)
    pairs = lambda vs: sum((a - b) ** 2 for i, a in enumerate(vs) for j, b in enumerate(vs) if i != j)
    observed = sum(Fraction(pairs(u), len(u) - 1) for u in units) / n
    expected = Fraction(pairs(values), n * (n - 1))
    return 1 - observed / expected


print("// Krippendorff's alpha, interval metric: Krippendorff (2011), 4 observers x 12 units")
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
alpha = krippendorff_interval(K2011)
print(f"// {alpha} = {float(alpha)!r}")
