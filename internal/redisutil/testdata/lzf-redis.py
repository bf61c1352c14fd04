# Generates lzf-redis.txt from a redis-server 7.0 on port 25001 (lzf_redis_test.go).
import subprocess
M=(1<<64)-1
class R:
    def __init__(s,seed): s.x=seed
    def n(s,k):
        s.x=(s.x*6364136223846793005+1442695040888963407)&M
        return (s.x>>33)%k
def gen(n,alpha,rep,seed):
    r=R(seed); b=bytearray(n)
    for i in range(n):
        if rep==1 and i>=8 and r.n(4)>0: b[i]=b[i-1-r.n(8)]
        elif rep==2 and i>=300 and r.n(8)>0: b[i]=b[i-300]
        else: b[i]=r.n(alpha)
    return bytes(b)
lines=[]
for n in [21,33,100,1000,4097]:
  for alpha in [1,2,256]:
    for rep in range(3):
      s=gen(n,alpha,rep,n*1000+alpha*10+rep)
      subprocess.run(["redis-cli","-p","25001","-x","set","k"],input=s,check=True,capture_output=True)
      d=subprocess.run(["redis-cli","-p","25001","--raw","dump","k"],capture_output=True,check=True).stdout[:-1]
      if d[1]!=0xC3:
          lines.append("%d %d %d -"%(n,alpha,rep)); continue
      p=2
      def rl(p):
        b=d[p]; t=b>>6
        if t==0: return b&63,p+1
        if t==1: return ((b&63)<<8)|d[p+1],p+2
        if b==0x80: return int.from_bytes(d[p+1:p+5],'big'),p+5
      clen,p=rl(p); ulen,p=rl(p); assert ulen==n
      lines.append("%d %d %d %s"%(n,alpha,rep,d[p:p+clen].hex()))
open("lzf-redis.txt","w").write("\n".join(lines)+"\n")
