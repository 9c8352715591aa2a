# 60 weather stations in a 100 km square (EPSG:3857 around Kansas) with a
# smooth temperature field plus noise, as a CSV of lon/lat.
r = rng()
n = 60
x = -10900000 + r.uniform(0, 100000, n)
y = 4600000 + r.uniform(0, 100000, n)
temp = 12 + 6 * (x - x.min()) / 100000 - 4 * (y - y.min()) / 100000 + 2 * np.sin((x - x.min()) / 15000) + r.normal(0, 0.3, n)
pts = gpd.GeoSeries(gpd.points_from_xy(x, y), crs=3857).to_crs(4326)
pd.DataFrame({"station": [f"S{i:03d}" for i in range(n)], "lon": pts.x.round(6), "lat": pts.y.round(6), "temp_c": temp.round(2)}).to_csv("data/stations.csv", index=False)
