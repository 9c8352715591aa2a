with rasterio.open("data/scene.tif") as src:
    img = src.read().astype("float64")
    transform = src.transform
train = gpd.read_file("data/training.geojson")
# %%
red, nir = img[2], img[3]
s = nir + red
ndvi = np.where(s == 0, 0.0, (nir - red) / np.where(s == 0, 1, s))
features = np.vstack([img, ndvi[None]]).reshape(5, -1).T
# %%
from rasterio.transform import rowcol
rr, cc = rowcol(transform, train.geometry.x.to_numpy(), train.geometry.y.to_numpy())
rr, cc = np.asarray(rr), np.asarray(cc)
X_train = features[rr * img.shape[2] + cc]
y_train = train["class_id"].to_numpy()
# %%
from sklearn.ensemble import RandomForestClassifier
model = RandomForestClassifier(n_estimators=100, random_state=0).fit(X_train, y_train)
classified = model.predict(features).reshape(img.shape[1:])
# %%
names = {1: "water", 2: "forest", 3: "crop", 4: "built"}
area_ha = {names[k]: round(float((classified == k).sum() * 100 / 10000), 2) for k in names}
