def ndvi_of(path):
    with rasterio.open(path) as src:
        red, nir = src.read(1) / 10000.0, src.read(2) / 10000.0
        return (nir - red) / (nir + red), src.transform
ndvi_2019, transform = ndvi_of("data/scene_2019.tif")
ndvi_2024, _ = ndvi_of("data/scene_2024.tif")
# %%
dndvi = ndvi_2024 - ndvi_2019
# %%
from scipy import ndimage
loss = dndvi < -0.2
labels, n = ndimage.label(loss, structure=np.ones((3, 3)))
sizes = ndimage.sum(loss, labels, range(1, n + 1))
loss_clean = np.isin(labels, np.flatnonzero(sizes >= 10) + 1)
# %%
loss_ha = loss_clean.sum() * 400 / 10000
# %%
from rasterio.features import rasterize
districts = gpd.read_file("data/districts.geojson")
loss_by_district = {}
for name, geom in zip(districts["district"], districts.geometry):
    m = rasterize([(geom, 1)], out_shape=dndvi.shape, transform=transform, fill=0).astype(bool)
    loss_by_district[name] = round(float((loss_clean & m).sum() * 400 / 10000), 2)
# %%
mean_dndvi_loss = round(float(dndvi[loss_clean].mean()), 4)
# %%
from rasterio.features import shapes
from shapely.geometry import shape
loss_polys = gpd.GeoDataFrame(geometry=[shape(g) for g, v in shapes(loss_clean.astype("uint8"), mask=loss_clean, transform=transform, connectivity=8) if v == 1], crs=32722)
n_loss_polys = len(loss_polys)
# %%
ndvi_2024_mean = round(float(ndvi_2024.mean()), 4)
# %%
largest_loss_poly_ha = round(float(loss_polys.area.max() / 10000), 4)
