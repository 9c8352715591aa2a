# %% what data/ holds
import os
import geopandas as gpd
import pyproj
print(sorted(os.listdir("data")))
hoods = gpd.read_file("data/etobicoke.geojson")
stations = gpd.read_file("data/fire_stations.geojson")
print("etobicoke:", hoods.crs, hoods.total_bounds.round(3), "| fire_stations:", stations.crs, stations.total_bounds.round(3))
# %% the two CRSs the request names
for code in (32633, 32617):
    crs = pyproj.CRS.from_epsg(code)
    print(f"EPSG:{code}:", crs.name, "| area of use (lon/lat):", crs.area_of_use.bounds)
lon, lat = hoods.union_all().centroid.coords[0]
print("Etobicoke centre:", round(lon, 3), round(lat, 3))
print("in EPSG:32633:", pyproj.Transformer.from_crs(4326, 32633, always_xy=True).transform(lon, lat))
print("'UTM zone 17N' and 'EPSG:32633' (zone 33N) are different CRSs; the request does not say which it means.")
