import rasterio
import matplotlib.pyplot as plt
with rasterio.open("data/CatalinaBathymetry.tif") as src:
    elev = src.read(1, masked=True).filled(np.nan).astype("float64"); transform = src.transform; crs = src.crs
obs = gpd.read_file("data/CoralandSpongeCatalina.geojson").to_crs(crs)
dzdy_rows, dzdx = np.gradient(elev, abs(transform.e), transform.a)
dzdy = -dzdy_rows  # rows run north to south
slope = np.degrees(np.arctan(np.hypot(dzdx, dzdy)))
aspect = (np.degrees(np.arctan2(-dzdx, -dzdy)) + 360) % 360  # downhill direction, clockwise from north
aspect[(dzdx == 0) & (dzdy == 0)] = -1
print(np.nanmin(slope), np.nanmax(slope))
# %%
rows, cols = rasterio.transform.rowcol(transform, obs.geometry.x, obs.geometry.y)
rows = np.clip(rows, 0, elev.shape[0] - 1); cols = np.clip(cols, 0, elev.shape[1] - 1)
obs["slope"] = slope[rows, cols]
obs["aspect"] = aspect[rows, cols]
obs.to_crs(4326).to_file("pred_results/CoralandSponge_terrain.geojson", driver="GeoJSON")
def circular_mean(a):
    a = np.radians(a[a >= 0])
    return (np.degrees(np.arctan2(np.sin(a).mean(), np.cos(a).mean())) + 360) % 360
summary = obs.groupby("VernacularNameCategory").agg(slope=("slope", "mean"), aspect=("aspect", circular_mean)).sort_values("slope")
print(summary)
# %%
fig, (a1, a2) = plt.subplots(1, 2, figsize=(14, 6))
a1.bar(summary.index, summary["slope"], color="steelblue")
a1.set_ylabel("Mean slope (degrees)"); a1.set_title("Mean slope per group")
a2.bar(summary.index, summary["aspect"], color="seagreen")
a2.set_ylabel("Mean aspect (degrees from north)"); a2.set_title("Circular mean aspect per group"); a2.set_ylim(0, 360)
for ax in (a1, a2):
    ax.tick_params(axis="x", rotation=45)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
fig.tight_layout()
fig.savefig("pred_results/CoralandSponge.png", dpi=100)
