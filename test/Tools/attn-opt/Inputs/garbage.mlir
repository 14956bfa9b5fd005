attn.attention ÿþ ins((( ]]} 
%% -> ->
