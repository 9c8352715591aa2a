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
# %%
train_acc = round(float((model.predict(X_train) == y_train).mean()), 4)
# %%
os.makedirs("pred_results", exist_ok=True)
with rasterio.open("data/scene.tif") as src:
    scene_crs = src.crs
with rasterio.open("pred_results/classified.tif", "w", driver="GTiff", width=classified.shape[1], height=classified.shape[0], count=1, dtype="uint8", crs=scene_crs, transform=transform) as dst:
    dst.write(classified.astype("uint8"), 1)
with rasterio.open("pred_results/classified.tif") as src:
    classes_in_file = sorted(int(v) for v in np.unique(src.read(1)))
# %%
top_feature = int(np.argmax(model.feature_importances_))
# %%
majority_class = names[int(np.bincount(classified.ravel()).argmax())]
