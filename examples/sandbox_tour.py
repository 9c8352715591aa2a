# A short tour of the gisclaw sandbox: run it with
#   gisclaw exec examples/sandbox_tour.py --workdir target/demo
# Cells are split at "# %%" lines; state persists from one cell to the next.

# %% Make a small synthetic data set: 200 weather stations with a smooth temperature field.
rng = np.random.default_rng(7)
x = rng.uniform(500_000, 520_000, 200)
y = rng.uniform(4_400_000, 4_420_000, 200)
temp = 15 + 0.0004 * (x - 500_000) - 0.0002 * (y - 4_400_000) + rng.normal(0, 0.3, 200)
stations = gpd.GeoDataFrame({"temp_c": temp}, geometry=gpd.points_from_xy(x, y), crs="EPSG:32617")
stations.to_file("stations.gpkg", layer="stations")
print(stations.describe())

# %% Interpolate onto a 100 m grid with scipy and save a GeoTIFF.
from scipy.interpolate import griddata
from rasterio.transform import from_origin
gx, gy = np.meshgrid(np.arange(500_050, 520_000, 100), np.arange(4_419_950, 4_400_000, -100))
surface = griddata(np.c_[x, y], temp, (gx, gy), method="linear").astype("float32")
save_raster("pred_results/temperature.tif", surface, crs="EPSG:32617", transform=from_origin(500_000, 4_420_000, 100, 100), nodata=np.nan)
grid, meta = load_raster("pred_results/temperature.tif")
grid.shape, meta["crs"]

# %% Map it.
fig, ax = plt.subplots(figsize=(6, 5))
img = ax.imshow(grid[0], extent=(500_000, 520_000, 4_400_000, 4_420_000), cmap="coolwarm")
stations.plot(ax=ax, markersize=4, color="black")
fig.colorbar(img, ax=ax, label="°C")
ax.set_title("Interpolated temperature")
plt.savefig("pred_results/temperature.png", dpi=150, bbox_inches="tight")
