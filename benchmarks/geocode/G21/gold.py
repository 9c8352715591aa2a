with rasterio.open("data/scene.tif") as src:
    img = src.read().astype("float64")
    transform = src.transform
    crs = src.crs
img_shape = list(img.shape)
# %%
green, red, nir = img[1], img[2], img[3]
s = nir + red
ndvi = np.where(s == 0, 0.0, (nir - red) / np.where(s == 0, 1, s))
ndvi_mean = round(float(ndvi.mean()), 4)
# %%
t = green + nir
ndwi = np.where(t == 0, 0.0, (green - nir) / np.where(t == 0, 1, t))
water_share = round(float((ndwi > 0).mean() * 100), 2)
# %%
band_corr = round(float(np.corrcoef(red.ravel(), nir.ravel())[0, 1]), 4)
# %%
from sklearn.cluster import KMeans
from sklearn.preprocessing import StandardScaler
pixels = StandardScaler().fit_transform(img.reshape(4, -1).T)
clusters = KMeans(n_clusters=4, n_init=10, random_state=0).fit_predict(pixels).reshape(img.shape[1:])
cluster_sizes = sorted(np.bincount(clusters.ravel()).tolist(), reverse=True)
# %%
from rasterio.transform import rowcol
train = gpd.read_file("data/training.geojson")
rr, cc = rowcol(transform, train.geometry.x.to_numpy(), train.geometry.y.to_numpy())
train["ndvi"] = ndvi[np.asarray(rr), np.asarray(cc)]
class_ndvi = {k: round(float(v), 4) for k, v in train.groupby("class_name")["ndvi"].mean().items()}
# %%
train["cluster"] = clusters[np.asarray(rr), np.asarray(cc)]
water_clusters = int(train.loc[train["class_id"] == 1, "cluster"].nunique())
# %%
os.makedirs("pred_results", exist_ok=True)
with rasterio.open("pred_results/ndvi.tif", "w", driver="GTiff", width=ndvi.shape[1], height=ndvi.shape[0], count=1, dtype="float32", crs=crs, transform=transform) as dst:
    dst.write(ndvi.astype("float32"), 1)
with rasterio.open("pred_results/ndvi.tif") as src:
    ndvi_file_max = round(float(src.read(1).max()), 4)
# %%
cluster_ndvi = {str(k): round(float(ndvi[clusters == k].mean()), 4) for k in range(4)}
# %%
brightness = img.mean(axis=0)
bright_cells = int((brightness > np.percentile(brightness, 90)).sum())
# %%
band_means = [round(float(b.mean()), 3) for b in img]
