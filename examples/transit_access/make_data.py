# Makes data/ for the transit_access example (run once with
# `gisclaw exec examples/transit_access/make_data.py --workdir examples/transit_access`);
# the files it writes are committed, so the example needs nothing at run time.
# Fictional city on the Lakeside grid (UTM 17N); the formats are the point:
# GeoParquet (stops), a zipped shapefile (districts), a CSV with lat/lon (households).
import os, zipfile, shutil
import numpy as np, pandas as pd, geopandas as gpd
from shapely.geometry import box

rng = np.random.default_rng(2026)
os.makedirs("data", exist_ok=True)
names = ["Centro", "São Bento", "Nord-Öst", "Łąka", "Fjärden", "Ville-Marie"]
cells = [box(600000 + c * 2000, 4400000 + r * 2000, 600000 + (c + 1) * 2000, 4400000 + (r + 1) * 2000)
         for r in range(2) for c in range(3)]
districts = gpd.GeoDataFrame({"district": names, "code": [f"D{i + 1}" for i in range(6)]},
                             geometry=cells, crs="EPSG:32617")
os.makedirs("shp", exist_ok=True)
districts.to_file("shp/districts.shp", encoding="UTF-8")
with zipfile.ZipFile("data/districts_shp.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(os.listdir("shp")):
        z.write(f"shp/{f}", f)
shutil.rmtree("shp")

# Stops cluster towards the centre-west; the east is poorly served.
n = 45
x = np.clip(rng.normal(602500, 1500, n), 600050, 605950)
y = rng.uniform(4400050, 4403950, n)
stops = gpd.GeoDataFrame({"stop_id": [f"S{i:03d}" for i in range(n)],
                          "stop_name": [f"Parada {i}" if i % 3 else f"Haltestelle Großmarkt {i}" for i in range(n)],
                          "routes": rng.integers(1, 5, n)},
                         geometry=gpd.points_from_xy(x, y), crs="EPSG:32617").to_crs(4326)
stops.to_parquet("data/stops.parquet")

m = 400
hx = rng.uniform(600000, 606000, m)
hy = rng.uniform(4400000, 4404000, m)
lonlat = gpd.GeoSeries(gpd.points_from_xy(hx, hy), crs="EPSG:32617").to_crs(4326)
pd.DataFrame({"block_id": np.arange(m), "lat": lonlat.y.round(6), "lon": lonlat.x.round(6),
              "households": rng.integers(5, 120, m)}).to_csv("data/households.csv", index=False)
print(len(districts), len(stops), m)
