import matplotlib.pyplot as plt
from scipy.optimize import curve_fit
from scipy.spatial.distance import cdist
temps = gpd.read_file("data/Temperature.geojson").to_crs(32616)
blocks = gpd.read_file("data/CensusBlock.geojson").to_crs(32616)
print(len(temps), len(blocks), temps.TemperatureF.describe())
# %% ordinary kriging with a fitted spherical variogram
xy = np.c_[temps.geometry.x, temps.geometry.y]
z = temps.TemperatureF.to_numpy()
d = cdist(xy, xy)
iu = np.triu_indices(len(z), 1)
gamma = 0.5 * (z[:, None] - z[None, :]) ** 2
bins = np.linspace(0, d[iu].max() / 2, 13)
idx = np.digitize(d[iu], bins)
lag = np.array([d[iu][idx == k].mean() for k in range(1, 13) if (idx == k).any()])
sv = np.array([gamma[iu][idx == k].mean() for k in range(1, 13) if (idx == k).any()])
def spherical(h, nugget, sill, rng_):
    h = np.minimum(h / rng_, 1.0)
    return nugget + sill * (1.5 * h - 0.5 * h**3)
(nugget, sill, vrange), _ = curve_fit(spherical, lag, sv, p0=[0.1, sv.max(), lag.max()], bounds=([0, 0, 100], [np.inf, np.inf, 1e6]))
print("variogram", nugget, sill, vrange)
n = len(z)
A = np.ones((n + 1, n + 1)); A[:n, :n] = spherical(d, nugget, sill, vrange); A[n, n] = 0
np.fill_diagonal(A[:n, :n], 0)
minx, miny, maxx, maxy = blocks.total_bounds
gx, gy = np.meshgrid(np.arange(minx, maxx, 200.0), np.arange(miny, maxy, 200.0))
g = np.c_[gx.ravel(), gy.ravel()]
b = np.ones((n + 1, len(g))); b[:n] = spherical(cdist(xy, g), nugget, sill, vrange)
w = np.linalg.solve(A, b)
pred = w[:n].T @ z
grid = gpd.GeoDataFrame({"temp_f": pred}, geometry=gpd.points_from_xy(g[:, 0], g[:, 1]), crs=32616)
# %% average per block group, merge, flag
joined = gpd.sjoin(grid, blocks[["OBJECTID", "geometry"]], predicate="within")
means = joined.groupby("OBJECTID").temp_f.mean().rename("mean_temp_f").reset_index()
blocks = blocks.merge(means, on="OBJECTID", how="left")
hot = blocks.mean_temp_f >= blocks.mean_temp_f.quantile(0.75)
old = blocks.Block_Groups_Over65Density >= blocks.Block_Groups_Over65Density.quantile(0.75)
blocks["at_risk"] = hot & old
print(blocks.at_risk.sum(), "block groups hot and elderly")
# %% map
fig, ax = plt.subplots(figsize=(9, 9))
blocks.plot(column="mean_temp_f", cmap="inferno", legend=True, ax=ax, edgecolor="white", linewidth=0.3,
            legend_kwds={"label": "Mean kriged temperature (°F)"})
blocks[blocks.at_risk].boundary.plot(ax=ax, color="cyan", linewidth=2.5, label="hot and many over 65")
temps.plot(ax=ax, color="black", markersize=6)
ax.set_title("Madison urban heat and elderly exposure"); ax.legend(); ax.set_axis_off()
fig.savefig("pred_results/interpolated_urban_heat.png", dpi=120, bbox_inches="tight")
