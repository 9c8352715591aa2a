import matplotlib.pyplot as plt
from shapely.geometry import Polygon
flows = pd.read_csv("data/flow.csv")[["x_o", "y_o", "x_d", "y_d"]].to_numpy()
o_area = Polygon(pd.read_csv("data/o_area.csv")[["x", "y"]].to_numpy())
d_area = Polygon(pd.read_csv("data/d_area.csv")[["x", "y"]].to_numpy())
scale = np.linspace(0.01, 1.2, 100)
n = len(flows)
print(n, "flows; areas", round(o_area.area, 3), round(d_area.area, 3))
# %%
def flow_L(f):
    do = np.hypot(f[:, None, 0] - f[None, :, 0], f[:, None, 1] - f[None, :, 1])
    dd = np.hypot(f[:, None, 2] - f[None, :, 2], f[:, None, 3] - f[None, :, 3])
    d = np.sort(np.maximum(do, dd)[np.triu_indices(len(f), 1)])
    pairs = 2 * np.searchsorted(d, scale, side="right")          # ordered pairs i ≠ j
    K = o_area.area * d_area.area * pairs / (len(f) * (len(f) - 1))
    return (K / np.pi**2) ** 0.25 - scale
L = flow_L(flows)
print("peak L", L.max().round(4), "at r =", scale[L.argmax()].round(3))
# %%
rs = np.random.default_rng(0)
def uniform_in(poly, k):
    minx, miny, maxx, maxy = poly.bounds
    out = np.empty((0, 2))
    while len(out) < k:
        xy = rs.uniform([minx, miny], [maxx, maxy], size=(2 * k, 2))
        out = np.vstack([out, xy[shapely.contains_xy(poly, xy[:, 0], xy[:, 1])]])
    return out[:k]
sims = np.array([flow_L(np.hstack([uniform_in(o_area, n), uniform_in(d_area, n)])) for _ in range(99)])
low, high = np.percentile(sims, 2.5, axis=0), np.percentile(sims, 97.5, axis=0)
pd.DataFrame({"r": scale, "L": L, "L_low": low, "L_high": high}).to_csv("pred_results/flow_L_function.csv", index=False)
print("scales above the envelope:", scale[L > high].min().round(3), "-", scale[L > high].max().round(3))
# %%
peak = scale[L.argmax()]
fig, ax = plt.subplots(figsize=(8, 5))
ax.fill_between(scale, low, high, color="grey", alpha=0.3, label="95 % CSR envelope (99 simulations)")
ax.plot(scale, L, color="blue", label="L(r)")
ax.axhline(0, color="black", linewidth=0.8)
ax.axvline(peak, color="red", linestyle="--", label=f"peak at r = {peak:.2f} km")
ax.set_xlabel("distance r (km)"); ax.set_ylabel("L(r)")
ax.set_title("Flow L-function")
ax.legend()
fig.savefig("pred_results/flow_L_function.png", dpi=100, bbox_inches="tight")
