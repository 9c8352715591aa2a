# %% what data/ holds
import os
import pandas as pd
import geopandas as gpd
print(sorted(os.listdir("data")))
elk = gpd.read_file("data/Elk_in_Southwestern_Alberta_2009.geojson")
print(len(elk), "fixes,", elk.crs, list(elk.columns))
# %% which years and summers do the fixes cover?
t = pd.to_datetime(elk["timestamp"])
print("first fix:", t.min(), "| last fix:", t.max())
print("fixes per year:", t.dt.year.value_counts().sort_index().to_dict())
summer = elk["summer_indicator"] == 1
print("summer fixes per year:", t[summer].dt.year.value_counts().sort_index().to_dict())
print("summer fixes per elk and year:")
print(pd.crosstab(elk.loc[summer, "ind_ident"], t[summer].dt.year))
