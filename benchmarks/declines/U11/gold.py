# %% what data/ holds
import os
import geopandas as gpd
print(sorted(os.listdir("data")))
crashes = gpd.read_file("data/crashes.shp")
print("crashes.shp:", len(crashes), "crashes,", crashes.crs, list(crashes.columns))
# %% which years are recorded?
print(crashes["CRASH_YEAR"].value_counts().sort_index())
print("2019 crashes:", int((crashes["CRASH_YEAR"] == 2019).sum()))
