import rasterio
from rasterio.features import geometry_mask
from rasterio.transform import from_origin
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, RBF, WhiteKernel
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from sklearn.pipeline import make_pipeline
import matplotlib.pyplot as plt
meas = gpd.read_file("data/Global_ocean_measurements.shp").to_crs(6933)
seagrass = gpd.read_file("data/USA_seagrass.shp").to_crs(6933)
usa = gpd.read_file("data/USA_shallow_waters.shp").to_crs(6933)
world = gpd.read_file("data/Global_shallow_waters.shp").to_crs(6933)
beds = seagrass.union_all()
rs = np.random.default_rng(0)
def random_points(shape, n):
    minx, miny, maxx, maxy = shape.bounds
    out = np.empty((0, 2))
    while len(out) < n:
        xy = rs.uniform([minx, miny], [maxx, maxy], size=(4 * n, 2))
        out = np.vstack([out, xy[shapely.contains_xy(shape, xy[:, 0], xy[:, 1])]])
    return out[:n]
presence = random_points(beds, 2000)
print(len(seagrass), "beds;", len(meas), "measurements")
# %%
minx, miny, maxx, maxy = meas.total_bounds
cell = 20_000
cols, rows = int(np.ceil((maxx - minx) / cell)), int(np.ceil((maxy - miny) / cell))
transform = from_origin(minx, maxy, cell, cell)
gx = minx + cell * (np.arange(cols) + 0.5); gy = maxy - cell * (np.arange(rows) + 0.5)
GX, GY = np.meshgrid(gx, gy)
grid_km = np.c_[GX.ravel(), GY.ravel()] / 1000
xy_km = np.c_[meas.geometry.x, meas.geometry.y] / 1000
surfaces = {}
for field in ("temp", "salinity"):
    kernel = ConstantKernel(1.0) * RBF(length_scale=500.0, length_scale_bounds=(20, 5000)) + WhiteKernel(0.1)
    gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True, random_state=0).fit(xy_km, meas[field].to_numpy())
    surfaces[field] = gp.predict(grid_km).reshape(rows, cols).astype("float32")
    with rasterio.open(f"pred_results/{field}_kriged.tif", "w", driver="GTiff", height=rows, width=cols, count=1, dtype="float32",
                       crs="EPSG:6933", transform=transform) as dst:
        dst.write(surfaces[field], 1)
    print(field, gp.kernel_)
# %%
def sample(xy):
    r_, c_ = rasterio.transform.rowcol(transform, xy[:, 0], xy[:, 1])
    r_ = np.clip(r_, 0, rows - 1); c_ = np.clip(c_, 0, cols - 1)
    return np.c_[surfaces["temp"][r_, c_], surfaces["salinity"][r_, c_]]
background = random_points(usa.union_all(), 10_000)
X = np.vstack([sample(presence), sample(background)])
y = np.r_[np.ones(len(presence)), np.zeros(len(background))]
model = make_pipeline(StandardScaler(), PolynomialFeatures(2, include_bias=False), LogisticRegression(class_weight="balanced", max_iter=2000))
model.fit(X, y)
pts = np.vstack([presence, background])
train = gpd.GeoDataFrame({"temp": X[:, 0], "salinity": X[:, 1], "class": np.where(y == 1, "presence", "background"),
                          "probability": model.predict_proba(X)[:, 1]}, geometry=gpd.points_from_xy(pts[:, 0], pts[:, 1]), crs=6933)
train.to_file("pred_results/trainfeatures.geojson", driver="GeoJSON")
print(train.groupby("class")["probability"].mean())
# %%
inside = ~geometry_mask(world.geometry, out_shape=(rows, cols), transform=transform, all_touched=True)
prob = model.predict_proba(np.c_[surfaces["temp"].ravel(), surfaces["salinity"].ravel()])[:, 1].reshape(rows, cols)
pred = np.where(inside, prob, -9999.0).astype("float32")
with rasterio.open("pred_results/seagrass_predict.tif", "w", driver="GTiff", height=rows, width=cols, count=1, dtype="float32",
                   crs="EPSG:6933", transform=transform, nodata=-9999.0) as dst:
    dst.write(pred, 1)
fig, ax = plt.subplots(figsize=(12, 9))
im = ax.imshow(np.where(inside, prob, np.nan), extent=(minx, minx + cols * cell, maxy - rows * cell, maxy), cmap="YlGn", vmin=0, vmax=1)
world.boundary.plot(ax=ax, color="grey", linewidth=0.3)
seagrass.plot(ax=ax, color="purple")
fig.colorbar(im, ax=ax, shrink=0.6, label="relative probability of seagrass presence")
ax.set_title("Predicted seagrass habitat in shallow waters (known US beds in purple)")
ax.set_axis_off()
fig.savefig("pred_results/seagrass_predict.png", dpi=100, bbox_inches="tight")
