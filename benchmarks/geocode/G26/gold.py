with rasterio.open("data/scene_2019.tif") as src:
    red_2019, nir_2019 = src.read(1) / 10000.0, src.read(2) / 10000.0
    transform = src.transform
with rasterio.open("data/scene_2024.tif") as src:
    red_2024, nir_2024 = src.read(1) / 10000.0, src.read(2) / 10000.0
grid = list(red_2019.shape)
# %%
ndvi_2019 = (nir_2019 - red_2019) / (nir_2019 + red_2019)
ndvi_2024 = (nir_2024 - red_2024) / (nir_2024 + red_2024)
ndvi_means = [round(float(ndvi_2019.mean()), 4), round(float(ndvi_2024.mean()), 4)]
# %%
dndvi = ndvi_2024 - ndvi_2019
change_class = np.where(dndvi < -0.2, -1, np.where(dndvi > 0.02, 1, 0))
change_counts = {str(k): int((change_class == k).sum()) for k in (-1, 0, 1)}
# %%
gain_ha = round(float((change_class == 1).sum() * 400 / 10000), 2)
# %%
from rasterio.features import rasterize
districts = gpd.read_file("data/districts.geojson")
district_dndvi = {}
for name, geom in zip(districts["district"], districts.geometry):
    m = rasterize([(geom, 1)], out_shape=dndvi.shape, transform=transform, fill=0).astype(bool)
    district_dndvi[name] = round(float(dndvi[m].mean()), 4)
# %%
red_change = round(float((red_2024 - red_2019).mean()), 5)
# %%
ndvi_corr = round(float(np.corrcoef(ndvi_2019.ravel(), ndvi_2024.ravel())[0, 1]), 4)
# %%
os.makedirs("pred_results", exist_ok=True)
with rasterio.open("pred_results/change.tif", "w", driver="GTiff", width=grid[1], height=grid[0], count=1, dtype="int8", crs="EPSG:32722", transform=transform) as dst:
    dst.write(change_class.astype("int8"), 1)
with rasterio.open("pred_results/change.tif") as src:
    loss_cells_in_file = int((src.read(1) == -1).sum())
# %%
from scipy import ndimage
loss_labels, loss_patches = ndimage.label(change_class == -1, structure=np.ones((3, 3)))
# %%
largest_loss_patch_ha = round(float(np.bincount(loss_labels.ravel())[1:].max() * 400 / 10000), 2)
# %%
district_loss_ha = {}
for name, geom in zip(districts["district"], districts.geometry):
    m = rasterize([(geom, 1)], out_shape=dndvi.shape, transform=transform, fill=0).astype(bool)
    district_loss_ha[name] = round(float(((change_class == -1) & m).sum() * 400 / 10000), 2)
