# %% what data/ holds
import os
import geopandas as gpd
print(sorted(os.listdir("data")))
roads = gpd.read_file("data/AllSeasonRoads.geojson").to_crs(6690)
towns = gpd.read_file("data/ShikokuMetropolitan.geojson").to_crs(6690)
print("roads:", len(roads), "| towns:", len(towns), towns["AREATYPE"].value_counts().to_dict())
# %% the two zones the request combines
rural = towns[towns["AREATYPE"] == "RURAL"].union_all()
near = roads.buffer(2000).union_all().intersection(rural)
far = rural.difference(roads.buffer(3000).union_all())
print("rural land within 2 km of a road:", round(near.area / 1e6, 1), "km2")
print("rural land at least 3 km from every road:", round(far.area / 1e6, 1), "km2")
print("both at once:", round(near.intersection(far).area / 1e6, 6), "km2")
print("Within 2 km of a road and at least 3 km from the nearest road cannot both hold: the request contradicts itself.")
